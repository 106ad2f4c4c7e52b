// Which meters the live path counts (meter_activations), and the clean-up before a backfill is
// retried. See aggregator/active-meters.ts.
import type { ClickHouse } from '../client.js'

/** Meter activations: meter id -> activation time (µs). */
export async function readActivations(ch: ClickHouse): Promise<Map<string, bigint>> {
  const rows = await ch.query<{ meter_id: string; us: string }>(
    `SELECT meter_id, toString(max(activated_us)) AS us FROM ${ch.table('meter_activations')} GROUP BY meter_id`,
  )
  return new Map(rows.map((r) => [r.meter_id, BigInt(r.us)]))
}

export async function recordActivation(ch: ClickHouse, meterId: string, us: bigint): Promise<void> {
  await ch.insertCompact('meter_activations', [[meterId, us.toString()]])
}

/** Removes a meter's partial backfill before it is retried (synchronous mutations). */
export async function deleteMeterRows(ch: ClickHouse, meterId: string): Promise<void> {
  for (const table of ['meter_events', 'meter_buckets']) {
    await ch.command(`ALTER TABLE ${ch.table(table)} DELETE WHERE meter_id = {meter:String}`, { meter: meterId }, { mutations_sync: '2' })
  }
}

