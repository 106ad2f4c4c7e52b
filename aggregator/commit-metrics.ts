// Metrics of what the aggregator committed: events per tenant and meter, freshness (ingest's
// acceptance to the commit that makes the usage visible), and lag in events and seconds.
//
// Kafka tells the lag in records (one record = one ingest request, up to 1000 events), so lag
// in events is an estimate: records behind x the mean events per record this consumer read on
// the partition. Lag in seconds is computed when scraped: while records are behind, the time
// since ingest accepted the last batch committed on the partition. It grows by a second per
// second while the aggregator is stuck, which is what the "lag growing" alert watches.
import { aggregatorLagEvents, aggregatorLagSeconds, meterEventsCounted, usageFreshnessSeconds, writePathStageSeconds } from '../platform/business-metrics.js'
import { metricLabels } from '../platform/metric-labels.js'
import { aggregatorConsumerLag } from '../platform/metrics.js'
import type { Piece, PieceResult } from './write-stage.js'

interface PartitionLag {
  topic: string
  partition: string
  recordsBehind: number
  records: number
  events: number
  /** ingested_at (ms) of the last committed batch */
  lastIngestedMs: number | undefined
}

export class CommitMetrics {
  private readonly lag = new Map<string, PartitionLag>()

  constructor(private readonly nowMs: () => number = Date.now) {}

  private state(topic: string, partition: number): PartitionLag {
    const key = `${topic}/${partition}`
    let s = this.lag.get(key)
    if (!s) this.lag.set(key, (s = { topic, partition: String(partition), recordsBehind: 0, records: 0, events: 0, lastIngestedMs: undefined }))
    return s
  }

  /** A fetch: how many records the partition's high watermark is ahead of the last one read. */
  fetched(topic: string, partition: number, recordsBehind: number): void {
    this.state(topic, partition).recordsBehind = Math.max(0, recordsBehind)
  }

  committed(topic: string, partition: number, piece: Piece, result: PieceResult): void {
    const now = this.nowMs()
    const s = this.state(topic, partition)
    for (const { batch, producedMs } of piece.records) {
      s.records++
      s.events += batch.events.length
      s.lastIngestedMs = Math.max(s.lastIngestedMs ?? 0, batch.ingested_at)
      usageFreshnessSeconds.observe(Math.max(0, now - batch.ingested_at) / 1000)
      this.stages(batch.ingested_at, producedMs, piece.fetchedMs, result.timing, now)
    }
    const labels = metricLabels()
    for (const [key, n] of result.perMeter) {
      const [tenantId, meterId] = key.split('\0')
      meterEventsCounted.inc({ tenant: labels.tenant(tenantId), meter: labels.meter(tenantId, meterId) }, n)
    }
  }

  /** The freshness of one record split by stage; a stage whose ends are unknown is left out. */
  private stages(ingestedMs: number, producedMs: number | undefined, fetchedMs: number | undefined, timing: PieceResult['timing'], now: number): void {
    const marks: [string, number | undefined][] = [['spool', producedMs], ['broker', fetchedMs], ['queue', timing?.startedMs], ['write', timing?.visibleMs], ['commit', now]]
    let from: number | undefined = ingestedMs
    for (const [stage, to] of marks) {
      if (from !== undefined && to !== undefined && Number.isFinite(to)) writePathStageSeconds.observe({ stage }, Math.max(0, to - from) / 1000)
      from = to
    }
  }

  /**
   * Only these partitions are this consumer's now: the others' lag is another consumer's to
   * report (or nobody's, after this one stopped), so their series go, rather than stay at the
   * last value this consumer saw.
   */
  retain(topic: string, partitions: number[]): void {
    const keep = new Set(partitions.map((p) => `${topic}/${p}`))
    for (const [key, s] of this.lag) {
      if (keep.has(key)) continue
      this.lag.delete(key)
      const labels = { topic: s.topic, partition: s.partition }
      aggregatorLagEvents.remove(labels)
      aggregatorLagSeconds.remove(labels)
      aggregatorConsumerLag.remove(labels)
    }
  }

  /** Sets the lag gauges; called when /metrics is scraped. */
  collect(): void {
    const now = this.nowMs()
    for (const s of this.lag.values()) {
      const labels = { topic: s.topic, partition: s.partition }
      aggregatorLagEvents.set(labels, s.records === 0 ? s.recordsBehind : Math.round((s.recordsBehind * s.events) / s.records))
      const behind = s.recordsBehind > 0 && s.lastIngestedMs !== undefined
      aggregatorLagSeconds.set(labels, behind ? Math.max(0, now - s.lastIngestedMs!) / 1000 : 0)
    }
  }
}
