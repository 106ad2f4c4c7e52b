// bench:pricing-parse: the rule-based pricing reader (pure, no services) on a mix of
// descriptions, each parsed ROUNDS times. Prints parses per second and the time per parse.
//   npm run bench:pricing-parse -- --rounds 2000
import { parseArgs } from 'node:util'
import os from 'node:os'
import { parsePricingDescription } from '../billing-api/ai-pricing/index.js'

const { values: args } = parseArgs({ options: { rounds: { type: 'string' } } })
const ROUNDS = Number(args.rounds ?? 2000)
const TEXTS = [
  '$0.002 per API call',
  '$49/month',
  '$5 per 1000 tokens',
  'Pro plan: $49/month plus $0.002 per API call',
  'first 1000 free, then $0.01 per call up to 10k, $0.005 after',
  'Growth plan: $49/month, first 1000 API calls free, then $0.01 per call up to 10k, $0.005 after; includes SSO',
  'Volume pricing: $0.01 per call up to 10k, $0.008 up to 100k, $0.005 above 100k',
  'CHF 25 per month plus CHF 0.05 per minute',
]

const times: number[] = []
const t0 = performance.now()
for (let r = 0; r < ROUNDS; r++) {
  for (const text of TEXTS) {
    const t = performance.now()
    parsePricingDescription(text)
    times.push(performance.now() - t)
  }
}
const total = (performance.now() - t0) / 1000
times.sort((a, b) => a - b)
const at = (p: number) => (times[Math.min(times.length - 1, Math.floor(p * times.length))] * 1000).toFixed(0)
console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, node ${process.version}`)
console.log('| descriptions | parses | parses/s | p50 (µs) | p99 (µs) |')
console.log('|---|---|---|---|---|')
console.log(`| ${TEXTS.length} | ${times.length} | ${Math.round(times.length / total)} | ${at(0.5)} | ${at(0.99)} |`)
