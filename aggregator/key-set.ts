// The dedup keys of one shard's hot window, in memory: an open-addressing hash set of 128-bit
// digests, each with the minute (minutes since 1970) of its event's timestamp, in one
// Uint32Array (20 bytes a slot). Growth past 70 % load doubles the table; an eviction rebuilds it
// for its live keys and a quarter more, in a power of two: 36-71 bytes a key after an eviction.
// The shard's owner loads it from dedup_events at takeover (the keys of the hot window) and adds every key it counts, so a lookup of a recent event costs
// no statement. `evictBefore` drops the keys of events before a minute (older than the hot
// window, and written to dedup_events): the write stage calls it between writes.
import type { EventDigest } from '../schemas/shards.js'

const WORDS = 5
const MAX_LOAD = 0.7

export class KeySet {
  private table: Uint32Array
  private mask: number
  private count = 0
  /** the all-zero digest cannot mark an empty slot; it is kept aside */
  private zero: number | undefined

  constructor(expected = 1024) {
    this.table = new Uint32Array(slotsFor(expected) * WORDS)
    this.mask = this.table.length / WORDS - 1
  }

  get size(): number {
    return this.count + (this.zero === undefined ? 0 : 1)
  }

  get bytes(): number {
    return this.table.byteLength
  }

  has(d: EventDigest): boolean {
    if ((d.hi1 | d.hi0 | d.lo1 | d.lo0) === 0) return this.zero !== undefined
    const t = this.table
    // The digest is uniformly random: its high word is a good hash already.
    for (let slot = d.hi1 & this.mask; ; slot = (slot + 1) & this.mask) {
      const o = slot * WORDS
      if ((t[o] | t[o + 1] | t[o + 2] | t[o + 3]) === 0) return false
      if (t[o] === d.hi1 && t[o + 1] === d.hi0 && t[o + 2] === d.lo1 && t[o + 3] === d.lo0) return true
    }
  }

  /** Adds the key of an event of `minute`; false when it was present. */
  add(d: EventDigest, minute: number): boolean {
    if ((d.hi1 | d.hi0 | d.lo1 | d.lo0) === 0) {
      const had = this.zero !== undefined
      this.zero = Math.max(this.zero ?? 0, minute)
      return !had
    }
    if ((this.count + 1) > (this.mask + 1) * MAX_LOAD) this.rebuild(0, 2)
    return this.insert(d.hi1 >>> 0, d.hi0 >>> 0, d.lo1 >>> 0, d.lo0 >>> 0, minute >>> 0)
  }

  /** Drops the keys of events before `minute`; returns how many went. */
  evictBefore(minute: number): number {
    const before = this.size
    if (this.zero !== undefined && this.zero < minute) this.zero = undefined
    // A window loses about a minute of keys here and gains as many by the next eviction.
    this.rebuild(minute, 1.25)
    return before - this.size
  }

  private insert(a: number, b: number, c: number, e: number, minute: number): boolean {
    const t = this.table
    for (let slot = a & this.mask; ; slot = (slot + 1) & this.mask) {
      const o = slot * WORDS
      if ((t[o] | t[o + 1] | t[o + 2] | t[o + 3]) === 0) {
        t[o] = a
        t[o + 1] = b
        t[o + 2] = c
        t[o + 3] = e
        t[o + 4] = minute
        this.count++
        return true
      }
      if (t[o] === a && t[o + 1] === b && t[o + 2] === c && t[o + 3] === e) return false
    }
  }

  /** The keys of `keepFrom` on move to a table with room for `room` times as many. */
  private rebuild(keepFrom: number, room: number): void {
    const old = this.table
    let live = 0
    for (let o = 0; o < old.length; o += WORDS) {
      if ((old[o] | old[o + 1] | old[o + 2] | old[o + 3]) !== 0 && old[o + 4] >= keepFrom) live++
    }
    this.table = new Uint32Array(slotsFor(Math.max(1024, Math.ceil(live * room))) * WORDS)
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

/** Minute number (minutes since 1970-01-01) of an instant. */
export function minuteOf(ms: number): number {
  return Math.floor(ms / 60_000)
}
