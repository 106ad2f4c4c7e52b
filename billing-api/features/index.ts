// The features domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { serializeFeature } from './serialize.js'
export { reportedUsageSchema, toReportingUnit } from './reporting-unit.js'
export type { ReportedUsage } from './reporting-unit.js'
