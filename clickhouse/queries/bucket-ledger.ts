// The aggregator's write ledger: rows of meter_buckets with meter_id '~ledger', one per
// (consumer stream, month), written in the same insert block as the buckets they vouch for.
// An entry names the Kafka records whose buckets of that month are in the table, by content
// (batch_id, first event_id, event count), not by offset: a replay from a restarted broker, or
// in other groupings, arrives at other offsets and is still recognised. Each record comes with
// the time of the write that holds its buckets (meters activated later are not in them).
// info = `<write µs, 17 digits>|R|<JSON [[fingerprint, µs], ...]>`; the lexically largest
// (latest written) survives merges, so a write names again every record it still vouches for.
// Entries of the earlier format `<µs>|<first offset>|<last offset>|<batch_id>` are still read:
// they vouch by offset.
import type { ClickHouse } from '../client.js'

export const LEDGER_METER = '~ledger'

export interface LedgerEntry {
  writtenUs: bigint
  /** fingerprint (recordFingerprint) -> when the write that holds its buckets of the month ran */
  records: Map<string, bigint>
  /** an entry of the earlier format: the offsets of its stream it vouches for */
  offsets?: { first: bigint; last: bigint }
}

/** What identifies a Kafka record's content: the same record replayed has the same fingerprint. */
export function recordFingerprint(batch: { batch_id: string; events: { event_id: string }[] }): string {
  return `${batch.batch_id}|${batch.events[0]?.event_id ?? ''}|${batch.events.length}`
}

export function formatLedger(e: LedgerEntry): string {
  return `${e.writtenUs.toString().padStart(17, '0')}|R|${JSON.stringify([...e.records].map(([r, us]) => [r, us.toString()]))}`
}

export function parseLedger(info: string): LedgerEntry {
  const [us, kind, ...rest] = info.split('|')
  if (kind === 'R') {
    const records = JSON.parse(rest.join('|')) as [string, string][]
    return { writtenUs: BigInt(us), records: new Map(records.map(([r, at]) => [r, BigInt(at)])) }
  }
  return { writtenUs: BigInt(us), records: new Map(), offsets: { first: BigInt(kind), last: BigInt(rest[0]) } }
}

/** A meter_buckets row carrying a ledger entry for one stream and month (yyyymm). */
export function ledgerRow(stream: string, month: number, entry: LedgerEntry): unknown[] {
  const monthStart = Date.UTC(Math.floor(month / 100), (month % 100) - 1, 1) / 1000
  return ['', '', LEDGER_METER, stream, monthStart, [], '', '0', 0, '0', [0, '', '0'], [], formatLedger(entry), []]
}

/** stream -> month -> latest entry, for every stream. */
export async function readLedger(ch: ClickHouse): Promise<Map<string, Map<number, LedgerEntry>>> {
  const rows = await ch.query<{ stream: string; month: string; info: string }>(
    `SELECT external_customer_id AS stream, toString(toYYYYMM(bucket_start)) AS month, max(ledger) AS info
       FROM ${ch.table('meter_buckets')}
      WHERE tenant_id = '' AND environment_id = '' AND meter_id = {meter:String}
      GROUP BY stream, month`,
    { meter: LEDGER_METER },
  )
  const out = new Map<string, Map<number, LedgerEntry>>()
  for (const r of rows) {
    if (!out.has(r.stream)) out.set(r.stream, new Map())
    out.get(r.stream)!.set(Number(r.month), parseLedger(r.info))
  }
  return out
}
