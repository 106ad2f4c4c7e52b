// Small shared pieces: loading an API answer into a page, the error box, the pager, formats.
import { html } from 'htm/preact'
import { useCallback, useEffect, useState } from 'preact/hooks'
import type { VNode } from 'preact'
import { ApiError } from './api.js'

export interface Loaded<T> {
  data?: T
  error?: string
  loading: boolean
  reload: () => void
}

/** Runs `load` when a dependency changes; the latest call wins. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true })
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let live = true
    setState((s) => ({ data: s.data, loading: true }))
    load().then(
      (data) => live && setState({ data, loading: false }),
      (err: unknown) => live && setState({ error: messageOf(err), loading: false }),
    )
    return () => {
      live = false
    }
  }, [...deps, tick])
  const reload = useCallback(() => setTick((t) => t + 1), [])
  return { ...state, reload }
}

export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return `${err.response.message} (${err.response.code}, ${err.response.http_status_code})`
  return err instanceof Error ? err.message : String(err)
}

export function ErrorBox({ error }: { error?: string }): VNode | null {
  return error ? html`<div class="error" role="alert" data-testid="api-error">${error}</div>` : null
}

export function Status<T>({ loaded }: { loaded: Loaded<T> }): VNode | null {
  if (loaded.error) return html`<${ErrorBox} error=${loaded.error} />`
  if (loaded.loading && loaded.data === undefined) return html`<p class="muted">Loading…</p>`
  return null
}

/** Pages through the API's limit/offset paging. */
export function Pager({ offset, limit, total, go }: { offset: number; limit: number; total: number; go: (offset: number) => void }): VNode {
  const last = Math.min(offset + limit, total)
  return html`<div class="pager">
    <button disabled=${offset === 0} onClick=${() => go(Math.max(0, offset - limit))}>← Previous</button>
    <span>${total === 0 ? 'none' : `${offset + 1}–${last} of ${total}`}</span>
    <button disabled=${last >= total} onClick=${() => go(offset + limit)}>Next →</button>
  </div>`
}

export const dateTime = (iso: string | null | undefined): string => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC') : '—')
export const date = (iso: string | null | undefined): string => (iso ? iso.slice(0, 10) : '—')
export const money = (amount: string | null | undefined, currency: string): string => (amount === null || amount === undefined ? '—' : `${amount} ${currency}`)

export function Badge({ value }: { value: string | null | undefined }): VNode {
  return html`<span class=${`badge badge-${String(value ?? '').toLowerCase()}`}>${value ?? '—'}</span>`
}
