import type { DomainModule } from '../module.js'
import { MeterSchema } from './meter.entity.js'
import { meterRoutes } from './routes.js'

export const metersModule: DomainModule = { name: 'meters', entities: [MeterSchema], migrations: [], routes: meterRoutes }
