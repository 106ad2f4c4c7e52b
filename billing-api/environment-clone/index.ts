// The environment-clone domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { createEnvironmentCloneQueue, ENVIRONMENT_CLONE_QUEUE, startEnvironmentCloneWorker } from './queue.js'
export { runEnvironmentClone } from './run-clone.js'
export type { CloneProgress } from './run-clone.js'
