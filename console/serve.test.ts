// Serving the console: /console redirects to /console/, the built files come with a strict
// content security policy, and an unbuilt console answers the spec's ErrorResponse.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHttpServer } from '../platform/http.js'
import { assertError } from '../test/support/assertions.js'
import { registerConsole } from './serve.js'

async function serve(distDir: string) {
  const app = createHttpServer({ service: 'test', logLevel: 'fatal' })
  await registerConsole(app, distDir)
  return app
}

test('console files: redirect, index and assets with their headers; unknown files 404', async () => {
  const dir = `${mkdtempSync(join(tmpdir(), 'console-dist-'))}/`
  writeFileSync(`${dir}index.html`, '<!doctype html><div id="app"></div>')
  writeFileSync(`${dir}app.js`, 'export {}')
  const app = await serve(dir)
  try {
    const redirect = await app.inject('/console')
    assert.deepEqual([redirect.statusCode, redirect.headers.location], [302, '/console/'])
    const index = await app.inject('/console/')
    assert.equal(index.statusCode, 200)
    assert.match(index.body, /id="app"/)
    assert.match(String(index.headers['content-security-policy']), /default-src 'self'/)
    assert.equal(index.headers['referrer-policy'], 'no-referrer')
    const js = await app.inject('/console/app.js')
    assert.deepEqual([js.statusCode, String(js.headers['content-type']).split(';')[0]], [200, 'application/javascript'])
    const missing = await app.inject('/console/missing.js')
    assertError({ status: missing.statusCode, body: missing.json() }, 404, 'not_found')
  } finally {
    await app.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('an unbuilt console answers 503 service_unavailable naming the build command', async () => {
  const app = await serve(join(tmpdir(), 'no-such-console-dist/'))
  try {
    const res = await app.inject('/console/')
    assertError({ status: res.statusCode, body: res.json() }, 503, 'service_unavailable', /npm run console:build/)
  } finally {
    await app.close()
  }
})
