// The console's only way to the platform: the project's typed client (client/), with the
// signed-in key. An error answer becomes an ApiError carrying the API's own message.
import { createMeterlineClient, type ErrorResponse, type MeterlineClient } from '../../client/src/client.js'

export class ApiError extends Error {
  constructor(readonly response: ErrorResponse) {
    super(response.message)
  }
}

export function clientFor(apiKey: string): MeterlineClient {
  return createMeterlineClient({ baseUrl: location.origin, apiKey })
}

/** Unwraps an openapi-fetch answer: the data, or an ApiError with the API's message. */
export async function call<T>(answer: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await answer
  if (error !== undefined || !response.ok) {
    const e = error as Partial<ErrorResponse> | undefined
    throw new ApiError({
      code: e?.code ?? 'internal_error',
      http_status_code: e?.http_status_code ?? response.status,
      message: e?.message ?? `${response.status} ${response.statusText}`,
    } as ErrorResponse)
  }
  return data as T
}

export interface Page<T> {
  items: T[]
  pagination: { limit: number; offset: number; total: number }
}

export const PAGE_SIZE = 25
