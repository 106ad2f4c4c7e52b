// Carries committed aggregator writes to every API process over Redis pub-sub (channel
// `<prefix>:live:writes`). Only the process running the aggregator is told of a write; it
// publishes the write, and with it the time before which every acknowledged event is counted
// (usage_as_of), also as a heartbeat when nothing is written. Each write id's high-water mark is
// recorded in the hash `<prefix>:live:hwm` in the same MULTI as the publish, so a process that
// starts listening later knows which writes its bucket reads already hold.
//
// Message: `<publisher id>|<json>`; a process skips its own messages (it applied them directly).
// json: {as_of, w?: {writes, g: [[tenant, environment, meter, [[customer, bucket_start, sum, count, max], ...]], ...]}, hello?}
import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { CommittedBucket, CommittedWrite, CommittedWriteListener } from '../../schemas/committed-write.js'
import type { LiveCounters } from './counters.js'

type Row = [string, number, string, number, string]
interface Message {
  as_of: number | null
  w?: { writes: CommittedWrite['writes']; g: [string, string, string, Row[]][]; v?: number }
  /** a publisher (re)started: writes committed before its start may never have been published */
  hello?: true
}

/** HSET only upwards: seqs are decimal strings without leading zeros (a replay must not lower the mark). */
const RAISE = `local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur or #cur < #ARGV[2] or (#cur == #ARGV[2] and cur < ARGV[2]) then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return 1`

const channelOf = (prefix: string) => `${prefix}:live:writes`
const hwmKeyOf = (prefix: string) => `${prefix}:live:hwm`

function encode(w: CommittedWrite): Message['w'] {
  const groups = new Map<string, [string, string, string, Row[]]>()
  for (const b of w.buckets) {
    const k = `${b.tenant_id}\0${b.environment_id}\0${b.meter_id}`
    let g = groups.get(k)
    if (!g) groups.set(k, (g = [b.tenant_id, b.environment_id, b.meter_id, []]))
    g[3].push([b.external_customer_id, b.bucket_start, b.value_sum, b.event_count, b.value_max])
  }
  return { writes: w.writes, g: [...groups.values()], v: w.visible_from }
}

function decode(m: NonNullable<Message['w']>): CommittedWrite {
  const buckets: CommittedBucket[] = []
  for (const [tenant_id, environment_id, meter_id, rows] of m.g) {
    for (const [external_customer_id, bucket_start, value_sum, event_count, value_max] of rows) {
      buckets.push({ tenant_id, environment_id, meter_id, external_customer_id, bucket_start, value_sum, event_count, value_max })
    }
  }
  return { writes: m.writes, buckets, visible_from: m.v }
}

export interface WritePublisher {
  /** the aggregator's onCommittedWrite */
  listener: CommittedWriteListener
  stop(): void
}

/**
 * The aggregator side. `asOf`: the instant before which every acknowledged event is committed
 * (all-in-one: the ingest spool knows it), or null when this process cannot tell.
 * `local`: this process's own counters, applied directly.
 */
export function startWritePublisher(redis: Redis, prefix: string, opts: {
  asOf: () => number | null
  heartbeatMs: number
  local?: LiveCounters
  log: (msg: string, err?: unknown) => void
  /** not connected this long after the start: Redis is down, and that is logged (default 5 s) */
  connectGraceMs?: number
}): WritePublisher {
  const id = randomBytes(6).toString('hex')
  const channel = channelOf(prefix)
  if (opts.local) opts.local.ownPublisher = id
  let failing = false
  // Until the connection is first ready nothing is sent (without an offline queue a send fails
  // at once) and nothing is lost: the hello sent once it is ready makes every subscriber read its
  // counters again, and the high-water marks recorded meanwhile go with it.
  let connected = redis.status === 'ready'
  const held = new Map<string, string>()
  const startedAt = Date.now()
  const hold = (hwm: [string, string][] = []) => {
    for (const [field, seq] of hwm) if (!held.has(field) || BigInt(seq) > BigInt(held.get(field)!)) held.set(field, seq)
    if (!failing && Date.now() - startedAt >= (opts.connectGraceMs ?? 5000)) {
      opts.log('publishing a committed write to Redis failed: Redis has not been reachable since this process started; live counters fall behind until it is')
      failing = true
    }
  }
  const send = (m: Message, hwm?: [string, string][]) => {
    if (!connected) return hold(hwm)
    const multi = redis.multi()
    for (const [field, seq] of hwm ?? []) multi.eval(RAISE, 1, hwmKeyOf(prefix), field, seq)
    multi.publish(channel, `${id}|${JSON.stringify(m)}`)
    multi.exec().then(
      () => (failing = false),
      (err) => {
        // Subscribers reset their counters when they reconnect; a lost message while Redis
        // itself stays up is not expected. Logged once per outage.
        if (!failing) opts.log('publishing a committed write to Redis failed; live counters fall behind until Redis is back', err)
        failing = true
      },
    )
  }
  const hello = () => {
    connected = true
    send({ as_of: opts.asOf(), hello: true }, [...held])
    held.clear()
  }
  if (connected) hello()
  else redis.once('ready', hello)
  const timer = setInterval(() => {
    const asOf = opts.asOf()
    opts.local?.heard(asOf)
    send({ as_of: asOf })
  }, opts.heartbeatMs)
  timer.unref()
  return {
    listener(w) {
      try {
        opts.local?.apply(w)
        // The as_of of a write's own message is taken before the spool hears of its commit: conservative.
        const asOf = opts.asOf()
        opts.local?.heard(asOf)
        send({ as_of: asOf, w: encode(w) }, w.writes.map((x) => [`${x.shard}|${x.epoch}`, x.seq]))
      } catch (err) {
        opts.log('live counters: a committed write could not be applied', err)
      }
    },
    stop() {
      clearInterval(timer)
      redis.off('ready', hello)
    },
  }
}

export interface WriteSubscriber {
  stop(): Promise<void>
  /** resolves once subscribed and seeded */
  ready: Promise<void>
}

/** The API side: a dedicated subscriber connection feeding `counters`. */
export function startWriteSubscriber(sub: Redis, reader: Redis, prefix: string, counters: LiveCounters, log: (msg: string, err?: unknown) => void): WriteSubscriber {
  const channel = channelOf(prefix)
  let gap = false
  const seed = async () => {
    const marks = await reader.hgetall(hwmKeyOf(prefix))
    counters.seedHighWater(new Map(Object.entries(marks).map(([k, v]) => [k, BigInt(v)])))
  }
  sub.on('message', (ch: string, raw: string) => {
    if (ch !== channel) return
    const bar = raw.indexOf('|')
    if (counters.ownPublisher !== undefined && raw.slice(0, bar) === counters.ownPublisher) return
    try {
      const m = JSON.parse(raw.slice(bar + 1)) as Message
      if (m.hello) counters.reset()
      if (m.w) counters.apply(decode(m.w))
      counters.heard(m.as_of)
    } catch (err) {
      log('live counters: a committed-write message could not be read', err)
    }
  })
  sub.on('close', () => {
    gap = true
  })
  sub.on('ready', () => {
    if (!gap) return
    gap = false
    // Messages published while disconnected are lost: read every counter again.
    counters.reset()
    seed().catch((err) => log('live counters: reading the high-water marks failed', err))
  })
  const ready = sub.subscribe(channel).then(seed)
  return {
    ready,
    async stop() {
      await sub.quit().catch(() => sub.disconnect())
    },
  }
}
