// Whether the signed-in key may write: the API tells the key's own scope
// (GET /v1/secrets/api/keys/current); pages ask `canWrite(scope)` and nothing else.
import type { MeterlineClient } from '../../client/src/client.js'

export type KeyScope = 'read-write' | 'read-only'

export async function loadKeyScope(client: MeterlineClient): Promise<KeyScope> {
  const { data } = await client.GET('/v1/secrets/api/keys/current')
  return data?.scope === 'read_only' ? 'read-only' : 'read-write'
}

export const canWrite = (scope: KeyScope): boolean => scope === 'read-write'
