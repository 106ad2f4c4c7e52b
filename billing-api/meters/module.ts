import { meterSchema } from './response-schemas.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { MeterSchema } from './meter.entity.js'
import { meterRoutes } from './routes.js'

export const metersModule: DomainModule = {
  name: 'meters',
  entities: [MeterSchema],
  migrations: [sqlMigration('meters_0001_rounding_bucket_size', new URL('./migrations/0001_meter_rounding_bucket_size.sql', import.meta.url))],
  schemas: [meterSchema],
  routes: meterRoutes,
}
