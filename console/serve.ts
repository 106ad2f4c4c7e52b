// Serves the operators' console (console/dist, built by console/build.ts at install) at
// /console/ from the billing API's process. The console holds no data of its own: in the browser
// it calls the public /v1 API with the operator's API key, so it sees what that key sees.
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ServiceUnavailableError } from '../platform/errors.js'

export const CONSOLE_DIST = fileURLToPath(new URL('./dist/', import.meta.url))

export async function registerConsole(app: FastifyInstance, distDir = CONSOLE_DIST): Promise<void> {
  const built = existsSync(`${distDir}index.html`)
  await app.register(async (s) => {
    // The key never travels in a URL, and the page loads nothing from elsewhere.
    s.addHook('onSend', async (_req, reply) => {
      void reply.header('content-security-policy', "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
      void reply.header('referrer-policy', 'no-referrer')
      void reply.header('x-content-type-options', 'nosniff')
    })
    s.get('/console', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/console/'))
    if (!built) {
      s.get('/console/*', { schema: { hide: true } }, async () => {
        throw new ServiceUnavailableError('the console is not built: run npm run console:build (scripts/install-deps.sh does)')
      })
      return
    }
    await s.register(fastifyStatic, { root: distDir, prefix: '/console/', wildcard: true, index: 'index.html', cacheControl: false })
  })
}
