// Messages between the main thread and the ingest worker (INGEST_THREAD=worker).
import type { AuthContext } from '../../billing-api/http/request-auth.js'
import type { SpoolLeft } from '../spool/spool.js'

/** An ingest request as the main thread received it: authenticated, its body unread. */
export interface ForwardedRequest {
  url: string
  contentType?: string
  body?: Uint8Array
  auth: AuthContext
}

/** The worker's answer, sent to the client as it is. */
export interface ForwardedReply {
  status: number
  headers: Record<string, string>
  payload: string
}

export type Drained = SpoolLeft & { ms: number }

type Call =
  | { op: 'request'; req: ForwardedRequest }
  | { op: 'unforwarded' }
  | { op: 'drain'; ms: number }
  | { op: 'metrics' }
  | { op: 'stop' }
export type ToWorker = Call & { id: number }
export type FromWorker =
  | { type: 'ready' }
  | { type: 'failed'; error: string }
  | { type: 'log'; msg: string; err?: string }
  | { type: 'reply'; id: number; ok: true; value: unknown }
  | { type: 'reply'; id: number; ok: false; error: string }

/** Slots of the shared clock array the worker keeps current. */
export const SAFE_BEFORE = 0
export const SHARED_SLOTS = 1
