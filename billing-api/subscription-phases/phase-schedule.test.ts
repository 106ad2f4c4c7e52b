import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ValidationError } from '../../platform/errors.js'
import { checkNewPhaseStart, phaseEnds } from './phase-schedule.js'

const d = (s: string) => new Date(`2026-${s}T00:00:00Z`)
const now = d('09-10')
const subStart = d('09-01')

test('each phase ends where the next starts, whatever the order they were added in', () => {
  const ends = phaseEnds([{ id: 'c', start_date: d('11-01'), applied_at: null }, { id: 'a', start_date: d('09-16'), applied_at: d('09-16') }, { id: 'b', start_date: d('10-01'), applied_at: null }])
  assert.deepEqual([...ends.entries()], [['a', d('10-01')], ['b', d('11-01')], ['c', null]])
})

test('a new phase starts in the future, after the start, after applied phases, on a free date', () => {
  const phases = [{ id: 'a', start_date: d('09-08'), applied_at: d('09-08') }, { id: 'b', start_date: d('10-01'), applied_at: null }]
  checkNewPhaseStart(phases, d('09-20'), subStart, now)
  const refused: [Date, RegExp][] = [
    [d('09-10'), /must be in the future/],
    [d('09-05'), /must be in the future/],
    [d('10-01'), /a phase already starts at 2026-10-01/],
  ]
  for (const [start, message] of refused) assert.throws(() => checkNewPhaseStart(phases, start, subStart, now), (e: unknown) => e instanceof ValidationError && message.test(e.message))
  assert.throws(() => checkNewPhaseStart([], d('09-01'), subStart, d('08-01')), /after the subscription's start/)
  assert.throws(() => checkNewPhaseStart([{ id: 'x', start_date: d('09-20'), applied_at: d('09-20') }], d('09-15'), subStart, now), /after the phase already started at 2026-09-20/)
})
