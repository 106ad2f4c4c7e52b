// Debit allocation and credit conversion, with every amount worked out by hand.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { allocateDebit, compareForDebit, debitCreditsForAmount, topUpCreditsForAmount, type AvailableCredit } from './allocate.js'

const now = new Date('2026-11-10T00:00:00Z')
const day = (d: number) => new Date(Date.UTC(2026, 10, d))
const credit = (id: string, available: string, priority: number | null, expiry: Date | null, createdDay: number): AvailableCredit =>
  ({ id, available, priority, expiry_date: expiry, created_at: day(createdDay) })

// Debit order: priority ascending (null last), soonest expiry (null last), oldest created_at, id.
const a = credit('a', '10', 1, day(30), 1) // priority 1, expires Nov 30
const b = credit('b', '5', 0, null, 2) // priority 0, never expires: first despite no expiry
const c = credit('c', '8', 1, day(20), 3) // priority 1, expires Nov 20: before a
const d = credit('d', '100', null, day(11), 4) // no priority: last although it expires soonest
const expired = credit('e', '50', 0, day(1), 1) // expired on Nov 1: never consumed
const empty = credit('f', '0', -5, null, 1) // nothing left: skipped

const plain = (plan: ReturnType<typeof allocateDebit>) => ({
  allocations: plan.allocations.map((x) => [x.id, x.credits.toString()]),
  shortfall: plan.shortfall.toString(),
})

test('credits are consumed by priority, then soonest expiry, then age; expired and empty credits never', () => {
  const all = [a, b, c, d, expired, empty]
  // 20 = b 5 + c 8 + a 7 (a keeps 3, d untouched)
  assert.deepEqual(plain(allocateDebit(all, '20', now)), { allocations: [['b', '5'], ['c', '8'], ['a', '7']], shortfall: '0' })
  // 23 = b 5 + c 8 + a 10 exactly: d is not touched
  assert.deepEqual(plain(allocateDebit(all, '23', now)), { allocations: [['b', '5'], ['c', '8'], ['a', '10']], shortfall: '0' })
  // 130 = 5 + 8 + 10 + 100 = 123, 7 short; the 50 expired credits do not help
  assert.deepEqual(plain(allocateDebit(all, '130', now)), { allocations: [['b', '5'], ['c', '8'], ['a', '10'], ['d', '100']], shortfall: '7' })
  // fractional: 0.000000000001 from b only
  assert.deepEqual(plain(allocateDebit(all, '0.000000000001', now)), { allocations: [['b', '0.000000000001']], shortfall: '0' })
  assert.deepEqual(plain(allocateDebit([expired, empty], '1', now)), { allocations: [], shortfall: '1' })
  assert.throws(() => allocateDebit(all, '0', now), RangeError)
})

test('an expiry_date equal to now is expired; ties fall back to created_at, then id', () => {
  const atNow = credit('x', '5', 0, now, 1)
  const justAfter = credit('y', '5', 0, new Date(now.getTime() + 1), 1)
  assert.deepEqual(plain(allocateDebit([atNow, justAfter], '6', now)), { allocations: [['y', '5']], shortfall: '1' })
  const older = credit('z2', '1', 2, null, 1)
  const newer = credit('z1', '1', 2, null, 2)
  const twin = credit('z0', '1', 2, null, 1)
  assert.deepEqual([newer, older, twin].sort(compareForDebit).map((x) => x.id), ['z0', 'z2', 'z1'])
})

test('currency converts to credits exactly, rounding up for debits and down for top-ups', () => {
  // 10 / 0.25 = 40 exactly either way
  assert.equal(debitCreditsForAmount('10', '0.25').toString(), '40')
  assert.equal(topUpCreditsForAmount('10', '0.25').toString(), '40')
  // 10 / 3 = 3.333...: a debit takes 3.333333333334, a top-up grants 3.333333333333
  assert.equal(debitCreditsForAmount('10', '3').toString(), '3.333333333334')
  assert.equal(topUpCreditsForAmount('10', '3').toString(), '3.333333333333')
  // 2 / 3 = 0.666...: a debit takes 0.666666666667, a top-up grants 0.666666666666
  assert.equal(debitCreditsForAmount('2', '3').toString(), '0.666666666667')
  assert.equal(topUpCreditsForAmount('2', '3').toString(), '0.666666666666')
  // the smallest amount still costs one 12th-decimal credit, and buys none
  assert.equal(debitCreditsForAmount('0.000000000001', '3').toString(), '0.000000000001')
  assert.equal(topUpCreditsForAmount('0.000000000001', '3').toString(), '0')
})
