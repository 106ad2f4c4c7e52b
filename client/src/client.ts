// The typed Meterline client: openapi-fetch over the types generated from the OpenAPI document
// (schema.ts). Paths start with /v1, so baseUrl is the server's origin.
import createClient, { type Client } from 'openapi-fetch'
import type { components, paths } from './schema.js'

export type MeterlineClient = Client<paths>
export type ErrorResponse = components['schemas']['ErrorResponse']

export interface MeterlineClientOptions {
  /** e.g. http://127.0.0.1:8080 */
  baseUrl: string
  apiKey: string
  /** another environment of the key's tenant (X-Environment-ID) */
  environmentId?: string
  /** a fetch of your own (proxies, instrumentation, tests) */
  fetch?: (input: Request) => Promise<Response>
}

export function createMeterlineClient(opts: MeterlineClientOptions): MeterlineClient {
  const headers: Record<string, string> = { 'x-api-key': opts.apiKey }
  if (opts.environmentId) headers['x-environment-id'] = opts.environmentId
  return createClient<paths>({ baseUrl: opts.baseUrl.replace(/\/+$/, ''), headers, fetch: opts.fetch })
}
