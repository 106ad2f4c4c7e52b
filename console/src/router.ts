// Hash routes (#/customers/cus_1?meter=...): the page state lives in the fragment, which the
// browser never sends to the server. The API key is never part of it.
import { useEffect, useState } from 'preact/hooks'

export interface Route {
  parts: string[]
  query: URLSearchParams
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '')
  const [path = '', query = ''] = raw.split('?', 2)
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(query) }
}

export function href(path: string, query: Record<string, string | number | undefined | null> = {}): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v))
  const s = q.toString()
  return `#${path}${s ? `?${s}` : ''}`
}

export function navigate(path: string, query: Record<string, string | number | undefined | null> = {}): void {
  location.hash = href(path, query)
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash))
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash))
    addEventListener('hashchange', on)
    return () => removeEventListener('hashchange', on)
  }, [])
  return route
}
