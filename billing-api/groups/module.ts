import type { DomainModule } from '../module.js'
import { groupSchema } from './response-schemas.js'
import { sqlMigration } from '../module.js'
import { GroupSchema } from './group.entity.js'
import { groupRoutes } from './routes.js'

export const groupsModule: DomainModule = {
  name: 'groups',
  entities: [GroupSchema],
  migrations: [sqlMigration('groups_0001_init', new URL('./migrations/0001_init.sql', import.meta.url))],
  schemas: [groupSchema],
  routes: groupRoutes,
}
