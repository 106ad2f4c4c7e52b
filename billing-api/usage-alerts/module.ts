import type { DomainModule } from '../module.js'
import { sqlMigration } from '../module.js'

/** Usage alerts of features (check-due.ts, run by the scheduler): only their fired-state table. */
export const usageAlertsModule: DomainModule = {
  name: 'usage-alerts',
  entities: [],
  migrations: [sqlMigration('usage_alerts_0001_states', new URL('./migrations/0001_usage_alert_states.sql', import.meta.url))],
}
