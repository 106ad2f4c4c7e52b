// The signed-in API key lives in this tab's sessionStorage only: never in a URL, a cookie or a
// log, and gone when the tab closes.
const KEY = 'meterline.console.api_key'

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY)
}

export function storeKey(apiKey: string): void {
  sessionStorage.setItem(KEY, apiKey)
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY)
}
