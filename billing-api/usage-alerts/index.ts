// The usage-alerts domain's public surface: what other domains and the composition root use.
export { checkUsageAlerts, USAGE_ALERT_EVENT } from './check-due.js'
