import type { Flexprice } from '@flexprice/sdk'
import type { ManualClock } from '../../../platform/clock.js'
import type { ApiClient, TestPlatform } from '../../support/platform.js'
import type { Recorder } from '../recorder.js'

/** What the scenarios share: the SDK as a user configures it, and the records made so far. */
export interface Scenario {
  sdk: Flexprice
  rec: Recorder
  p: TestPlatform
  /** the platform's clock, which steps move on where a change needs time to pass */
  clock: ManualClock
  /** our own API, only for what the SDK has no operation for (meters) */
  api: ApiClient
  tenantId: string
  /** the user the SDK's API key belongs to */
  userId: string
  environmentId: string
  /** ids of records made by earlier steps; absent when the step that makes it failed */
  ids: Partial<Record<string, string>>
}

/** Calls `run` with the ids it needs, or records every operation it would call as not reached. */
export async function needing(s: Scenario, keys: string[], operations: string[], run: (...ids: string[]) => Promise<void>): Promise<void> {
  const missing = keys.filter((k) => !s.ids[k])
  if (missing.length > 0) {
    for (const op of operations) s.rec.skip(op, missing.join(', '))
    return
  }
  await run(...keys.map((k) => s.ids[k]!))
}
