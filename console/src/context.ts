// What every page needs from the session: the typed client of the signed-in key and its scope.
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { MeterlineClient } from '../../client/src/client.js'
import type { KeyScope } from './key-scope.js'

export interface Session {
  client: MeterlineClient
  scope: KeyScope
}

export const SessionContext = createContext<Session | null>(null)

export function useSession(): Session {
  const s = useContext(SessionContext)
  if (!s) throw new Error('no session')
  return s
}
