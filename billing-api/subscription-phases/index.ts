// The subscription-phases domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { startDuePhases } from './phase-switch.js'
