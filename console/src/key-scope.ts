// Whether the signed-in key may write. The API does not say a key's scope yet (read-only keys
// are being added on another branch); until it does, every key is taken as read-write and
// write actions show. When the API tells the scope (e.g. a field of the key's own record),
// read it here: pages ask `canWrite(scope)` and nothing else.
import type { MeterlineClient } from '../../client/src/client.js'

export type KeyScope = 'read-write' | 'read-only'

export async function loadKeyScope(_client: MeterlineClient): Promise<KeyScope> {
  return 'read-write'
}

export const canWrite = (scope: KeyScope): boolean => scope === 'read-write'
