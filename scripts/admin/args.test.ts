import { test } from 'node:test'
import assert from 'node:assert/strict'
import { parseArgs } from './args.js'

test('commands and their options', () => {
  assert.deepEqual(parseArgs(['jobs', 'list']), { kind: 'jobs-list' })
  assert.deepEqual(parseArgs(['jobs', 'run', 'subscription-billing']), { kind: 'jobs-run', name: 'subscription-billing', tenantId: undefined, wait: true })
  assert.deepEqual(parseArgs(['jobs', 'run', 'x', '--tenant', 'tenant_1', '--no-wait']), { kind: 'jobs-run', name: 'x', tenantId: 'tenant_1', wait: false })
  assert.deepEqual(parseArgs(['jobs', 'status']), { kind: 'jobs-status', queue: undefined, failures: 10 })
  assert.deepEqual(parseArgs(['jobs', 'status', '--queue=webhook-delivery', '--failures', '0']), { kind: 'jobs-status', queue: 'webhook-delivery', failures: 0 })
  assert.deepEqual(parseArgs(['jobs', 'retry', '42']), { kind: 'jobs-retry', queue: 'scheduler', id: '42' })
  assert.deepEqual(parseArgs(['jobs', 'retry', '--all', '--queue', 'invoice-compute']), { kind: 'jobs-retry-all', queue: 'invoice-compute' })
  assert.deepEqual(parseArgs(['jobs', 'show', '7', '--queue', 'integration-sync']), { kind: 'jobs-show', queue: 'integration-sync', id: '7' })
  assert.deepEqual(parseArgs(['tenant', 'create', 'Acme Inc.']), { kind: 'tenant-create', name: 'Acme Inc.', keyEnvironment: 'production' })
  assert.deepEqual(parseArgs(['tenant', 'create', 'A', '--key-environment', 'development']), { kind: 'tenant-create', name: 'A', keyEnvironment: 'development' })
  assert.deepEqual(parseArgs(['aggregators', 'list']), { kind: 'aggregators-list' })
  assert.deepEqual(parseArgs(['aggregators', 'set', '3']), { kind: 'aggregators-set', n: 3 })
})

test('usage errors name the problem', () => {
  assert.throws(() => parseArgs([]), /no command/)
  assert.throws(() => parseArgs(['jobs', 'run']), /jobs run needs a job name/)
  assert.throws(() => parseArgs(['jobs', 'retry']), /needs a job id \(or --all\)/)
  assert.throws(() => parseArgs(['jobs', 'list', '--verbose', 'x']), /unknown option --verbose/)
  assert.throws(() => parseArgs(['jobs', 'status', '--failures', '500']), /--failures must be an integer from 0 to 100/)
  assert.throws(() => parseArgs(['jobs', 'run', 'a', 'b']), /unexpected argument b/)
  assert.throws(() => parseArgs(['tenant', 'create', 'A', '--key-environment', 'staging']), /production or development/)
  assert.throws(() => parseArgs(['jobs', 'status', '--queue']), /--queue needs a value/)
  assert.throws(() => parseArgs(['aggregators', 'set']), /aggregators set needs a number/)
  assert.throws(() => parseArgs(['aggregators', 'set', '9']), /integer from 1 to 8/)
  assert.throws(() => parseArgs(['aggregators', 'set', '1.5']), /integer from 1 to 8/)
})
