import type { DomainModule } from '../module.js'
import { featureSchema } from './response-schemas.js'
import { sqlMigration } from '../module.js'
import { FeatureSchema } from './feature.entity.js'
import { featureRoutes } from './routes.js'

export const featuresModule: DomainModule = {
  name: 'features',
  entities: [FeatureSchema],
  migrations: [sqlMigration('features_0001_init', new URL('./migrations/0001_init.sql', import.meta.url))],
  schemas: [featureSchema],
  routes: featureRoutes,
}
