// A steady stream of events to ingest, as a client that retries does: a batch that got no 202
// (a 503, a reset, a timeout) is sent again with the same event ids until it is accepted, so
// every accepted id must be counted exactly once whatever failed on the way.
export class EventLoad {
  readonly accepted = new Set<string>()
  retries = 0
  private running = false
  private loop?: Promise<void>
  private batch = 0

  constructor(
    private readonly opts: { ingestUrl: string; apiKey: string; eventName: string; customers: number; batchSize: number; everyMs: number },
  ) {}

  start(): void {
    this.running = true
    this.loop = this.run()
  }

  async stop(): Promise<void> {
    this.running = false
    await this.loop
  }

  private async run(): Promise<void> {
    const tag = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`
    while (this.running) {
      const t0 = Date.now()
      const b = this.batch++
      const events = Array.from({ length: this.opts.batchSize }, (_, i) => ({
        event_id: `${tag}-${b}-${i}`, event_name: this.opts.eventName, external_customer_id: `c-${i % this.opts.customers}`,
        timestamp: new Date().toISOString(), properties: {},
      }))
      await this.send(events)
      await new Promise((r) => setTimeout(r, Math.max(0, this.opts.everyMs - (Date.now() - t0))))
    }
  }

  private async send(events: { event_id: string }[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await fetch(`${this.opts.ingestUrl}/v1/events/raw/bulk`, {
          method: 'POST', headers: { 'x-api-key': this.opts.apiKey, 'content-type': 'application/json' }, body: JSON.stringify({ events }),
          signal: AbortSignal.timeout(10_000),
        })
        await res.arrayBuffer()
        if (res.status === 202) {
          for (const e of events) this.accepted.add(e.event_id)
          return
        }
      } catch {
        // reset or timeout: the outcome is unknown, the same ids go again
      }
      this.retries++
      if (attempt > 600) throw new Error('ingest did not accept a batch for minutes')
      await new Promise((r) => setTimeout(r, 200))
    }
  }
}
