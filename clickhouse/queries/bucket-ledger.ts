// The aggregator's write ledger: rows of meter_buckets with meter_id '~ledger', one per
// (consumer stream, month), written in the same insert block as the buckets they vouch for.
// info = `<write µs, 17 digits>|<first offset>|<last offset>|<first record's batch_id>`; the
// lexically largest (latest written) survives merges.
import type { ClickHouse } from '../client.js'

export const LEDGER_METER = '~ledger'

export interface LedgerEntry {
  writtenUs: bigint
  first: bigint
  last: bigint
  batchId: string
}

export function formatLedger(e: LedgerEntry): string {
  return `${e.writtenUs.toString().padStart(17, '0')}|${e.first}|${e.last}|${e.batchId}`
}

export function parseLedger(info: string): LedgerEntry {
  const [us, first, last, ...batch] = info.split('|')
  return { writtenUs: BigInt(us), first: BigInt(first), last: BigInt(last), batchId: batch.join('|') }
}

/** A meter_buckets row carrying a ledger entry for one stream and month (yyyymm). */
export function ledgerRow(stream: string, month: number, entry: LedgerEntry): unknown[] {
  const monthStart = Date.UTC(Math.floor(month / 100), (month % 100) - 1, 1) / 1000
  return ['', '', LEDGER_METER, stream, monthStart, [], '', '0', 0, '0', [0, '', '0'], [], formatLedger(entry)]
}

/** stream -> month -> latest entry. */
export async function readLedger(ch: ClickHouse, streams: string[]): Promise<Map<string, Map<number, LedgerEntry>>> {
  const rows = await ch.query<{ stream: string; month: string; info: string }>(
    `SELECT external_customer_id AS stream, toString(toYYYYMM(bucket_start)) AS month, max(ledger) AS info
       FROM ${ch.table('meter_buckets')}
      WHERE tenant_id = '' AND environment_id = '' AND meter_id = {meter:String} AND has({streams:Array(String)}, external_customer_id)
      GROUP BY stream, month`,
    { meter: LEDGER_METER, streams },
  )
  const out = new Map<string, Map<number, LedgerEntry>>()
  for (const r of rows) {
    if (!out.has(r.stream)) out.set(r.stream, new Map())
    out.get(r.stream)!.set(Number(r.month), parseLedger(r.info))
  }
  return out
}
