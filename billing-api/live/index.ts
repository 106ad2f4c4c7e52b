// The live domain's public surface: what the composition root, benches and other domains use.
export { liveAccess, startLiveAccess } from './live-access.js'
export type { LiveAccess } from './live-access.js'
export { startWritePublisher } from './write-bus.js'
export type { WritePublisher } from './write-bus.js'
export { BALANCE_DEPLETED, USAGE_LIMIT_REACHED } from './spend-caps.js'
