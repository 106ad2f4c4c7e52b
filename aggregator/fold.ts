// Folds the bucket rows of one write that share a bucket key into one row, as the table's
// merges would (sums add, max of maxima, max of latest tuples, union of sets), so a write
// inserts one row per bucket instead of one per (meter, event). Exact: decimals are added as
// integers scaled by 10^12 (the Decimal(38, 12) scale), never as floats.
const SCALE = 12
const SMALL_INT = /^-?\d{1,15}$/

/** A Decimal(38, 12) text ('-12.5', '3') as an integer count of 10^-12. */
export function scaled(text: string): bigint {
  const dot = text.indexOf('.')
  if (dot < 0) return BigInt(text) * 10n ** BigInt(SCALE)
  const frac = text.slice(dot + 1)
  const digits = text.slice(0, dot) + frac + '0'.repeat(SCALE - frac.length)
  return BigInt(digits)
}

export function unscaled(n: bigint): string {
  const neg = n < 0n
  const s = (neg ? -n : n).toString().padStart(SCALE + 1, '0')
  const int = s.slice(0, s.length - SCALE)
  const frac = s.slice(s.length - SCALE).replace(/0+$/, '')
  return `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`
}

type Latest = [number, string, string]

/** ClickHouse compares strings bytewise (UTF-8); JS compares UTF-16 units, which differ beyond ASCII. */
function compareText(a: string, b: string): number {
  if (a === b) return 0
  return Buffer.compare(Buffer.from(a), Buffer.from(b))
}

function laterOf(a: Latest, b: Latest): Latest {
  if (a[0] !== b[0]) return a[0] > b[0] ? a : b
  const c = compareText(a[1], b[1])
  if (c !== 0) return c > 0 ? a : b
  return scaled(a[2]) >= scaled(b[2]) ? a : b
}

interface Acc {
  row: unknown[]
  /** set once a second row joins: the sum as a safe integer while every value is one, else scaled */
  int?: number
  sum?: bigint
  max?: bigint
  uniq?: Set<string>
  points?: Map<string, unknown>
}

const ORIGIN = 14

function keyOf(row: unknown[]): string {
  return `${row[0] as string}\u0000${row[1] as string}\u0000${row[2] as string}\u0000${row[3] as string}\u0000${row[4] as number}\u0000${JSON.stringify(row[5])}\u0000${row[6] as string}\u0000${row[ORIGIN] as string}`
}

export class BucketFolder {
  private readonly acc = new Map<string, Acc>()
  rowsIn = 0

  add(row: unknown[]): void {
    this.rowsIn++
    const key = keyOf(row)
    const a = this.acc.get(key)
    if (!a) {
      this.acc.set(key, { row })
      return
    }
    if (a.sum === undefined && a.int === undefined) {
      a.row = [...a.row]
      const first = a.row[7] as string
      if (SMALL_INT.test(first)) a.int = Number(first)
      else a.sum = scaled(first)
      a.max = scaled(a.row[9] as string)
      a.uniq = new Set(a.row[11] as string[])
      a.points = new Map((a.row[13] as Latest[]).map((p) => [`${p[0]}\u0000${p[1]}`, p]))
    }
    const value = row[7] as string
    // Integers below 10^15 add exactly as numbers while the sum stays below 2^53 (the common
    // case: tokens, counts); anything else is added as a scaled integer.
    if (a.int !== undefined && SMALL_INT.test(value) && Math.abs(a.int) < 2 ** 52) a.int += Number(value)
    else {
      if (a.int !== undefined) {
        a.sum = BigInt(a.int) * 10n ** BigInt(SCALE)
        a.int = undefined
      }
      a.sum! += scaled(value)
    }
    a.row[8] = (a.row[8] as number) + (row[8] as number)
    const max = row[9] === a.row[9] ? a.max! : scaled(row[9] as string)
    if (max > a.max!) {
      a.max = max
      a.row[9] = row[9]
    }
    a.row[10] = laterOf(a.row[10] as Latest, row[10] as Latest)
    for (const u of row[11] as string[]) a.uniq!.add(u)
    for (const p of row[13] as Latest[]) a.points!.set(`${p[0]}\u0000${p[1]}`, p)
  }

  rows(): unknown[][] {
    const out: unknown[][] = []
    for (const a of this.acc.values()) {
      if (a.int !== undefined || a.sum !== undefined) {
        a.row[7] = a.int !== undefined ? String(a.int) : unscaled(a.sum!)
        a.row[11] = [...a.uniq!]
        a.row[13] = [...a.points!.values()]
      }
      out.push(a.row)
    }
    return out
  }

  get size(): number {
    return this.acc.size
  }
}
