// Two schedulers at once: a second connection pool stands for a second process running the
// same job against the same database, so claims (FOR UPDATE SKIP LOCKED) and idempotency keys
// are tested under real concurrency.
import type { BillingContext } from '../../billing-api/context.js'
import { openOrm } from '../../billing-api/database.js'
import type { TestPlatform } from './platform.js'

export async function withSecondProcess<R>(p: TestPlatform, run: (ctxB: BillingContext) => Promise<R>): Promise<R> {
  const second = await openOrm(p.config.databaseUrl, 4)
  try {
    return await run({ ...p.ctx, orm: second })
  } finally {
    await second.close()
  }
}
