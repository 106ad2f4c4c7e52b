import type { DomainModule } from '../module.js'
import { addonSchema } from './response-schemas.js'
import { sqlMigration } from '../module.js'
import { AddonSchema } from './addon.entity.js'
import { addonRoutes } from './routes.js'

export const addonsModule: DomainModule = {
  name: 'addons',
  entities: [AddonSchema],
  migrations: [sqlMigration('addons_0001_init', new URL('./migrations/0001_init.sql', import.meta.url))],
  schemas: [addonSchema],
  routes: addonRoutes,
}
