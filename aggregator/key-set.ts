// The dedup keys of one shard, in memory: an open-addressing hash set of 128-bit digests, each
// with the UTC day (days since 1970) of its event, in one Uint32Array (20 bytes a key, about 30
// at the load factor kept). The shard's owner loads it from dedup_keys at takeover and adds
// every key it writes, so a lookup costs no statement. Keys older than the dedup horizon
// (`keepFrom`) are dropped whenever the table is rebuilt, so memory holds the horizon's keys.
import type { EventDigest } from '../schemas/shards.js'

const WORDS = 5
const MAX_LOAD = 0.7

export class KeySet {
  private table: Uint32Array
  private mask: number
  private count = 0
  /** the all-zero digest cannot mark an empty slot; it is kept aside */
  private hasZero = false

  constructor(
    expected = 1024,
    /** the first event day whose keys must be kept (the dedup horizon); none: every key */
    private readonly keepFrom?: () => number,
  ) {
    this.table = new Uint32Array(slotsFor(expected) * WORDS)
    this.mask = this.table.length / WORDS - 1
  }

  get size(): number {
    return this.count + (this.hasZero ? 1 : 0)
  }

  get bytes(): number {
    return this.table.byteLength
  }

  has(d: EventDigest): boolean {
    if ((d.hi1 | d.hi0 | d.lo1 | d.lo0) === 0) return this.hasZero
    const t = this.table
    // The digest is uniformly random: its high word is a good hash already.
    for (let slot = d.hi1 & this.mask; ; slot = (slot + 1) & this.mask) {
      const o = slot * WORDS
      if ((t[o] | t[o + 1] | t[o + 2] | t[o + 3]) === 0) return false
      if (t[o] === d.hi1 && t[o + 1] === d.hi0 && t[o + 2] === d.lo1 && t[o + 3] === d.lo0) return true
    }
  }

  /** Adds the key of an event of `day`; false when it was present (its day moves to the later one). */
  add(d: EventDigest, day: number): boolean {
    if ((d.hi1 | d.hi0 | d.lo1 | d.lo0) === 0) {
      const had = this.hasZero
      this.hasZero = true
      return !had
    }
    if ((this.count + 1) > (this.mask + 1) * MAX_LOAD) this.rebuild()
    return this.insert(d.hi1 >>> 0, d.hi0 >>> 0, d.lo1 >>> 0, d.lo0 >>> 0, day >>> 0)
  }

  private insert(a: number, b: number, c: number, e: number, day: number): boolean {
    const t = this.table
    for (let slot = a & this.mask; ; slot = (slot + 1) & this.mask) {
      const o = slot * WORDS
      if ((t[o] | t[o + 1] | t[o + 2] | t[o + 3]) === 0) {
        t[o] = a
        t[o + 1] = b
        t[o + 2] = c
        t[o + 3] = e
        t[o + 4] = day
        this.count++
        return true
      }
      if (t[o] === a && t[o + 1] === b && t[o + 2] === c && t[o + 3] === e) {
        if (day > t[o + 4]) t[o + 4] = day
        return false
      }
    }
  }

  /** Full: the keys within the horizon move to a table with room for as many again. */
  private rebuild(): void {
    const old = this.table
    const keepFrom = this.keepFrom?.() ?? 0
    let live = 0
    for (let o = 0; o < old.length; o += WORDS) {
      if ((old[o] | old[o + 1] | old[o + 2] | old[o + 3]) !== 0 && old[o + 4] >= keepFrom) live++
    }
    this.table = new Uint32Array(slotsFor(Math.max(1024, live * 2)) * WORDS)
    this.mask = this.table.length / WORDS - 1
    this.count = 0
    for (let o = 0; o < old.length; o += WORDS) {
      if ((old[o] | old[o + 1] | old[o + 2] | old[o + 3]) !== 0 && old[o + 4] >= keepFrom) this.insert(old[o], old[o + 1], old[o + 2], old[o + 3], old[o + 4])
    }
  }
}

function slotsFor(keys: number): number {
  let slots = 1024
  while (slots * MAX_LOAD < keys) slots *= 2
  return slots
}

/** UTC day number (days since 1970-01-01) of an instant. */
export function dayOf(ms: number): number {
  return Math.floor(ms / 86_400_000)
}
