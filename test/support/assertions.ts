// Assertions shared by the integration tests.
import assert from 'node:assert/strict'
import type { TestPlatform } from './platform.js'

/** The body is exactly the spec's ErrorResponse with this status and code. */
export function assertError(res: { status: number; body: any }, status: number, code: string, message?: RegExp): void {
  assert.equal(res.status, status, JSON.stringify(res.body))
  assert.deepEqual(Object.keys(res.body).sort(), ['code', 'http_status_code', 'message'])
  assert.equal(res.body.code, code)
  assert.equal(res.body.http_status_code, status)
  if (message) assert.match(res.body.message, message)
}

/** Rows of `table` in one tenant, straight from Postgres: what a rejected request must leave unchanged. */
export async function countRows(p: TestPlatform, table: string, tenantId: string): Promise<number> {
  const [row] = await p.ctx.orm.em.fork().getConnection().execute(`SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = ?`, [tenantId])
  return row.n
}
