// Retries a short operation that can fail for a moment (a dependency reconnecting), with
// exponential backoff: baseMs, 2 x baseMs, ... The last error is thrown.
export async function retrying<T>(work: () => Promise<T>, attempts = 3, baseMs = 200): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (err) {
      if (attempt >= attempts) throw err
      await new Promise((r) => setTimeout(r, baseMs * 2 ** (attempt - 1)))
    }
  }
}
