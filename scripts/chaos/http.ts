// The chaos run's HTTP calls to the platform: JSON in, the status and the parsed body out.
export interface ApiAnswer {
  status: number
  body: unknown
}

export interface Api {
  get(path: string): Promise<ApiAnswer>
  post(path: string, body: unknown): Promise<ApiAnswer>
  put(path: string, body: unknown): Promise<ApiAnswer>
}

export function httpApi(url: string, headers: Record<string, string>): Api {
  const call = async (method: string, path: string, body?: unknown): Promise<ApiAnswer> => {
    const res = await fetch(`${url}${path}`, {
      method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(120_000),
    })
    const text = await res.text()
    try {
      return { status: res.status, body: JSON.parse(text) as unknown }
    } catch {
      return { status: res.status, body: text }
    }
  }
  return { get: (path) => call('GET', path), post: (path, body) => call('POST', path, body), put: (path, body) => call('PUT', path, body) }
}

/** a failed call as an answer (status 0), so retry loops treat it like any other failure */
export const failed = (err: Error): ApiAnswer => ({ status: 0, body: err.message })
