import type { DomainModule } from '../module.js'
import { eventRoutes } from './routes.js'
import { SystemEventSchema } from './system-event.entity.js'

export const eventsModule: DomainModule = { name: 'events', entities: [SystemEventSchema], migrations: [], routes: eventRoutes }
