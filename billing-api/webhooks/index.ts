// The webhooks domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { createDeliveries } from './fan-out.js'
export { createWebhookQueue, startWebhookWorker, WEBHOOK_QUEUE } from './queue.js'
export { retryStaleWebhooks } from './retry-stale.js'
export { openWebhookSecret, sealWebhookSecret } from './secret-at-rest.js'
