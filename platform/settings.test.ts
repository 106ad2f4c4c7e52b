// The settings list cannot drift: every variable the code or a shell script reads is listed, the
// README's table is the list's rendering, and a listed default is what config.ts uses.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { loadConfig, PROJECT_ROOT } from './config.js'
import { README_TABLE_END, README_TABLE_START, renderSettingsTable, replaceSettingsTable, SETTINGS, type Setting } from './settings.js'

const CODE_DIRS = ['aggregator', 'billing-api', 'clickhouse', 'ingest', 'platform', 'scheduler', 'schemas', 'scripts', 'bench', 'test']

function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(join(PROJECT_ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(suffix) && !join(e.parentPath, e.name).includes('node_modules'))
    .map((e) => join(e.parentPath, e.name))
}

const READS_IN_CODE = [
  /process\.env\.([A-Z][A-Z0-9_]*)/g,
  /process\.env\[['"`]([A-Z][A-Z0-9_]*)['"`]\]/g,
  /\benv\.([A-Z][A-Z0-9_]*)\b/g,
  /\(env, '([A-Z][A-Z0-9_]*)'/g, // config.ts's readers: str(env, 'HOST')
]
// ${X:-default}, ${X:=default}, ${X:?message}, ${X-default}
const READS_IN_SHELL = /\$\{([A-Z][A-Z0-9_]*):?[-=?]/g

/** name -> the files that read it */
export function variablesRead(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>()
  const add = (name: string, file: string) => found.set(name, (found.get(name) ?? new Set()).add(relative(PROJECT_ROOT, file)))
  for (const file of CODE_DIRS.flatMap((d) => filesUnder(d, '.ts'))) {
    const text = readFileSync(file, 'utf8')
    for (const re of READS_IN_CODE) for (const m of text.matchAll(re)) add(m[1], file)
  }
  for (const file of filesUnder('scripts', '.sh')) {
    for (const m of readFileSync(file, 'utf8').matchAll(READS_IN_SHELL)) add(m[1], file)
  }
  return found
}

test('every environment variable read by the code or the shell scripts is in platform/settings.ts', () => {
  const read = variablesRead()
  // the scan itself works: variables known to be read in each kind of place
  for (const name of ['PORT', 'ADMIN_TOKEN', 'KAFKA_BROKERS', 'FUZZ_RUNS', 'PG_PORT', 'STACK_MODE', 'TEST_CONCURRENCY', 'METERLINE_API_URL']) {
    assert.ok(read.has(name), `the scan finds ${name}`)
  }
  const unlisted = [...read].filter(([name]) => !(name in SETTINGS)).map(([name, files]) => `${name} (${[...files].join(', ')})`)
  assert.deepEqual(unlisted, [], 'add these to platform/settings.ts, then run npm run docs:config')
})

test('every listed setting is still read somewhere (no stale rows)', () => {
  const read = variablesRead()
  assert.deepEqual(Object.keys(SETTINGS).filter((name) => !read.has(name)), [])
})

test("the README's configuration table is the list's rendering (npm run docs:config rewrites it)", () => {
  const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8')
  const start = readme.indexOf(README_TABLE_START)
  const end = readme.indexOf(README_TABLE_END)
  assert.ok(start >= 0 && end > start, 'the README has the table markers')
  assert.equal(readme.slice(start + README_TABLE_START.length, end).trim(), renderSettingsTable())
})

test('the table renders name, default (or what is shown for it), reader and meaning', () => {
  const table = renderSettingsTable({
    A: { default: '5', readBy: 'services', meaning: 'a | b' },
    B: { readBy: 'tests', meaning: 'm' },
    C: { default: '1024', shown: '1 KiB', readBy: 'CLI', meaning: 'c' },
  })
  assert.equal(table, [
    '| Variable | Default | Read by | Meaning |',
    '|---|---|---|---|',
    '| `A` | `5` | services | a \\| b |',
    '| `B` | unset | tests | m |',
    '| `C` | 1 KiB | CLI | c |',
  ].join('\n'))
  const doc = `intro\n${README_TABLE_START}\nold table\n${README_TABLE_END}\nrest\n`
  assert.equal(replaceSettingsTable(doc, 'NEW'), `intro\n${README_TABLE_START}\nNEW\n${README_TABLE_END}\nrest\n`)
  assert.throws(() => replaceSettingsTable('no markers', 'NEW'), /markers/)
})

test("a listed default is config.ts's default: setting it explicitly changes nothing", () => {
  const base = { KAFKA_BROKERS: '127.0.0.1:9092' }
  const defaults = loadConfig(base)
  const services = Object.entries<Setting>(SETTINGS).filter(([, s]) => s.readBy === 'services' && s.default !== undefined)
  assert.ok(services.length > 30)
  for (const [name, s] of services) {
    assert.deepEqual(loadConfig({ ...base, [name]: s.default }), defaults, name)
  }
  // and the values are really used: a few figures from the list
  assert.equal(defaults.ingestBodyLimitBytes, 10 * 1024 * 1024)
  assert.equal(defaults.spool.maxBytes, 2 * 1024 ** 3)
  assert.equal(defaults.redisUrl, 'redis://127.0.0.1:63799')
})

test('PG_PORT and REDIS_PORT decide the default URLs; explicit URLs win; ADMIN_TOKEN is checked', () => {
  const base = { KAFKA_BROKERS: '127.0.0.1:9092' }
  const local = loadConfig({ ...base, PG_PORT: '54403', REDIS_PORT: '63803' })
  assert.equal(local.databaseUrl, 'postgres://meterline:meterline@127.0.0.1:54403/meterline')
  assert.equal(local.redisUrl, 'redis://127.0.0.1:63803')
  const explicit = loadConfig({ ...base, PG_PORT: '54403', DATABASE_URL: 'postgres://u:p@db:5432/x', REDIS_URL: 'redis://r:6379' })
  assert.deepEqual([explicit.databaseUrl, explicit.redisUrl], ['postgres://u:p@db:5432/x', 'redis://r:6379'])
  assert.throws(() => loadConfig({ ...base, PG_PORT: 'five' }), /PG_PORT must be an integer >= 1/)

  assert.equal(loadConfig(base).adminToken, undefined)
  assert.equal(loadConfig({ ...base, ADMIN_TOKEN: 'a'.repeat(24) }).adminToken, 'a'.repeat(24))
  assert.throws(() => loadConfig({ ...base, ADMIN_TOKEN: 'a'.repeat(23) }), /ADMIN_TOKEN must be at least 24 characters/)
  assert.throws(() => loadConfig({ ...base, ADMIN_TOKEN: `${'a'.repeat(24)} b` }), /without spaces/)
})
