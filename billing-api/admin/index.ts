// The admin API's public surface: its routes for billing-api/app.ts, its job view for the CLI.
export { adminRoutes } from './routes.js'
export { jobView } from './job-view.js'
export type { FailureView, JobView } from './job-view.js'
export type { QueueStatus, ScheduledJob } from './queues.js'
