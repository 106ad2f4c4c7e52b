// The auth domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { candidateHashes, generateApiKey, hashApiKey, keyedFromDigest, LEGACY_SCHEME, schemeOf, type ApiKeyHashing } from './api-key.js'
export { RequestRateLimiter } from './request-rate-limit.js'
export { createAuthenticator, requireRole, scopeOf } from './authenticate.js'
export { authRoutes } from './routes.js'
