// Bad input through Flexprice's SDK gets our ErrorResponse {code, http_status_code, message}, and
// the SDK surfaces it as one of its typed errors carrying our status and body. The spec's error
// body has no `error`/`success` keys, so the SDK's ErrorsErrorsErrorResponse schema (used for the
// statuses an operation declares) refuses it and the SDK throws its ResponseValidationError; a
// status it does not declare is its SDKError. Both are FlexPriceError with statusCode and body.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Flexprice } from '@flexprice/sdk'
import { FlexPriceError } from '@flexprice/sdk/sdk/models/flex-price-error.js'
import { ResponseValidationError } from '@flexprice/sdk/sdk/models/response-validation-error.js'
import { SDKError } from '@flexprice/sdk/sdk/models/sdk-error.js'
import { usePlatform } from '../support/platform.js'

const p = usePlatform()

async function refusal(call: () => Promise<unknown>): Promise<FlexPriceError> {
  const err = await call().then(() => undefined, (e: unknown) => e)
  assert.ok(err instanceof FlexPriceError, `expected a FlexPriceError, got ${String(err)}`)
  return err
}

test('a 400 validation error and a 404 reach the SDK user as typed errors with our ErrorResponse', async () => {
  const t = await p.newTenant('SDK errors')
  const sdk = new Flexprice({ serverURL: `${p.url}/v1`, apiKeyAuth: t.apiKey })

  // createCustomer declares 400: the SDK validates the body against its own error schema
  const invalid = await refusal(() => sdk.customers.createCustomer({ externalId: 'x', email: 'not-an-email' }))
  assert.ok(invalid instanceof ResponseValidationError)
  assert.equal(invalid.statusCode, 400)
  assert.deepEqual(JSON.parse(invalid.body), { code: 'validation_error', http_status_code: 400, message: 'email must match format "email"' })

  // getCustomer declares no 404: the SDK's fallback error
  const missing = await refusal(() => sdk.customers.getCustomer('cust_missing'))
  assert.ok(missing instanceof SDKError)
  assert.equal(missing.statusCode, 404)
  const body = JSON.parse(missing.body) as { code: string; http_status_code: number; message: string }
  assert.equal(body.code, 'not_found')
  assert.equal(body.http_status_code, 404)
  assert.match(body.message, /cust_missing/)
})
