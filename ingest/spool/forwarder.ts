// Sends spooled records to Kafka (acks=all, the same key and tenancy headers as a direct
// produce), a few sends in flight, retrying failed sends with backoff until the broker is back.
// With the local in-memory broker it also watches the broker's generation topic
// (scripts/kafka-mock): a new name means the broker restarted empty, so whatever it had and
// the aggregator had not committed yet is sent again (the aggregator's dedup makes it exact).
import type { Admin, Kafka, Producer } from 'kafkajs'
import { spoolForwardFailures } from '../../platform/metrics.js'
import { produce } from '../pipeline.js'
import type { Spool, SpoolEntry } from './spool.js'

const SEND_BYTES = 1024 * 1024
const SEND_RECORDS = 200
const GENERATION_TOPIC = 'meterline.generation.'

export interface ForwarderOptions {
  spool: Spool
  producer: Producer
  topic: string
  /** set with the in-memory broker: detect its restarts */
  kafka?: Kafka
  maxInFlight?: number
  log: (msg: string, err?: unknown) => void
  /** after a broker restart was detected and the spool queued its records again */
  onBrokerRestart?: () => void
}

export interface Forwarder {
  /** sent and acknowledged records since start */
  stats: { sent: number; failures: number; brokerRestarts: number }
  stop(): Promise<void>
}

export function startForwarder(opts: ForwarderOptions): Forwarder {
  const { spool } = opts
  const maxInFlight = opts.maxInFlight ?? 4
  const stats = { sent: 0, failures: 0, brokerRestarts: 0 }
  let stopped = false
  let inFlight = 0
  let failuresInRow = 0
  let retryAt = 0
  const sends = new Set<Promise<void>>()

  async function send(entries: SpoolEntry[]) {
    const generation = spool.generation
    try {
      const records = await Promise.all(entries.map(async (e) => ({ key: e.key, value: await spool.valueOf(e), events: e.events, tenantId: e.tenantId, environmentId: e.environmentId })))
      await produce(opts.producer, opts.topic, records)
      spool.forwarded(entries, generation)
      stats.sent += entries.length
      failuresInRow = 0
    } catch (err) {
      spool.failed(entries)
      stats.failures++
      spoolForwardFailures.inc()
      if (failuresInRow++ % 20 === 0) opts.log(`spool: sending ${entries.length} records to Kafka failed; retrying (${spool.left().batches} batches wait)`, err)
      retryAt = Date.now() + Math.min(100 * 2 ** Math.min(failuresInRow, 5), 2000)
    }
  }

  let staleCheckAt = Date.now()
  const loop = (async () => {
    while (!stopped) {
      if (Date.now() >= staleCheckAt) {
        const again = spool.resendStale(spool.config.resendAfterMs)
        if (again) opts.log(`spool: ${again} records acknowledged by Kafka were not committed by the aggregator within ${spool.config.resendAfterMs} ms; sending them again`)
        staleCheckAt = Date.now() + 5000
      }
      while (!stopped && inFlight < maxInFlight && Date.now() >= retryAt && spool.canSend()) {
        const entries = spool.take(SEND_BYTES, SEND_RECORDS)
        if (entries.length === 0) break
        inFlight++
        const p: Promise<void> = send(entries).finally(() => {
          inFlight--
          sends.delete(p)
        })
        sends.add(p)
      }
      // Woken by any change (append, send result, commit); the timeout ends a retry backoff.
      const backoff = retryAt - Date.now()
      await spool.changed(backoff > 0 ? backoff : 1000)
    }
  })()

  let admin: Admin | undefined
  const watch = opts.kafka
    ? (async () => {
        let known: string | undefined
        admin = opts.kafka!.admin({ retry: { retries: 0 } })
        while (!stopped) {
          try {
            await admin.connect()
            const generation = (await admin.listTopics()).find((t) => t.startsWith(GENERATION_TOPIC))
            if (generation && known && generation !== known) {
              stats.brokerRestarts++
              const again = spool.brokerRestarted()
              opts.log(`spool: the broker restarted empty (${generation}); sending ${again} records again`)
              opts.onBrokerRestart?.()
            }
            if (generation) known = generation
          } catch {
            // broker down: the next round asks again
          }
          await new Promise((r) => setTimeout(r, 500))
        }
      })()
    : Promise.resolve()

  return {
    stats,
    async stop() {
      stopped = true
      await loop
      // A send still retrying against a dead broker is abandoned: its records stay in the spool.
      await Promise.race([Promise.all([...sends]), new Promise((r) => setTimeout(r, 2000))])
      await watch
      await admin?.disconnect().catch(() => undefined)
    },
  }
}
