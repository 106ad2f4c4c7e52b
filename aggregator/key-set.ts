// The dedup keys of one shard, in memory: an open-addressing hash set of 128-bit digests in
// one Uint32Array (16 bytes a key, about 24 at the load factor kept). The shard's owner loads
// it from event_keys at takeover and adds every key it writes, so a lookup costs no statement.
import type { EventDigest } from '../schemas/shards.js'

const WORDS = 4
const MAX_LOAD = 0.7

export class KeySet {
  private table: Uint32Array
  private mask: number
  private count = 0
  /** the all-zero digest cannot mark an empty slot; it is kept aside */
  private hasZero = false

  constructor(expected = 1024) {
    let slots = 1024
    while (slots * MAX_LOAD < expected) slots *= 2
    this.table = new Uint32Array(slots * WORDS)
    this.mask = slots - 1
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

  /** Adds the key; false when it was present. */
  add(d: EventDigest): boolean {
    if ((d.hi1 | d.hi0 | d.lo1 | d.lo0) === 0) {
      const had = this.hasZero
      this.hasZero = true
      return !had
    }
    if ((this.count + 1) > (this.mask + 1) * MAX_LOAD) this.grow()
    return this.insert(d.hi1 >>> 0, d.hi0 >>> 0, d.lo1 >>> 0, d.lo0 >>> 0)
  }

  private insert(a: number, b: number, c: number, e: number): boolean {
    const t = this.table
    for (let slot = a & this.mask; ; slot = (slot + 1) & this.mask) {
      const o = slot * WORDS
      if ((t[o] | t[o + 1] | t[o + 2] | t[o + 3]) === 0) {
        t[o] = a
        t[o + 1] = b
        t[o + 2] = c
        t[o + 3] = e
        this.count++
        return true
      }
      if (t[o] === a && t[o + 1] === b && t[o + 2] === c && t[o + 3] === e) return false
    }
  }

  private grow(): void {
    const old = this.table
    this.table = new Uint32Array(old.length * 2)
    this.mask = (this.table.length / WORDS) - 1
    this.count = 0
    for (let o = 0; o < old.length; o += WORDS) {
      if ((old[o] | old[o + 1] | old[o + 2] | old[o + 3]) !== 0) this.insert(old[o], old[o + 1], old[o + 2], old[o + 3])
    }
  }
}
