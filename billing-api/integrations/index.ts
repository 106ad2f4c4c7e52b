// The integrations domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { enqueueIntegrationSyncs } from './enqueue-from-events.js'
export { inboundWebhookRoutes } from './inbound-routes.js'
export { createIntegrationQueue, INTEGRATION_QUEUE, startIntegrationWorker } from './queue.js'
export { connectionAad, findOpenConnection } from './connections.js'
export { findMapping } from './mappings.js'
export { providerFor } from './providers.js'
export { syncEntity } from './sync.js'
