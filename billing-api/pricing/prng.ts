// Test support only (not exported from index.ts): a seeded PRNG so property tests
// are deterministic and a failure can be replayed from its seed.

/** mulberry32: tiny 32-bit PRNG returning floats in [0, 1). Never used for money. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Integer in [min, max], inclusive. */
export function randInt(rand: () => number, min: number, max: number): number {
  return min + Math.floor(rand() * (max - min + 1));
}

/** Non-negative decimal string built digit by digit: integer part < 10^intDigits, up to `decimals` places. */
export function randDecimalString(rand: () => number, intDigits: number, decimals: number): string {
  const int = String(randInt(rand, 0, 10 ** intDigits - 1));
  const places = randInt(rand, 0, decimals);
  if (places === 0) return int;
  let frac = '';
  for (let i = 0; i < places; i++) frac += String(randInt(rand, 0, 9));
  return `${int}.${frac}`;
}
