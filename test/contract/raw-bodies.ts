// Records what a route handed to fastify before its response schema serialized it, so a test
// can compare the route's own body with the document (serialization drops and coerces what the
// schema does not describe, and would hide it). Keyed by a request header the test sets.
import type { FastifyInstance } from 'fastify'

export const PROBE_HEADER = 'x-contract-probe'

export class RawBodies {
  private readonly bodies = new Map<string, unknown>()

  /** Installs the hook; pass as `onHttpServer` to the platform. */
  readonly install = (app: FastifyInstance): void => {
    app.addHook('preSerialization', async (request, _reply, payload) => {
      const probe = request.headers[PROBE_HEADER]
      // A JSON round trip: the body as JSON.stringify would send it (Dates, Decimals, no undefined).
      if (typeof probe === 'string') this.bodies.set(probe, payload === undefined ? undefined : JSON.parse(JSON.stringify(payload)))
      return payload
    })
  }

  /** The body the route produced for the request with this probe id (undefined: none, e.g. a 204). */
  take(probe: string): { found: boolean; body: unknown } {
    const found = this.bodies.has(probe)
    const body = this.bodies.get(probe)
    this.bodies.delete(probe)
    return { found, body }
  }
}
