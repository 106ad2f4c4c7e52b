// `npm run docs:config`: rewrites the README's configuration table from platform/settings.ts.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PROJECT_ROOT } from '../platform/config.js'
import { renderSettingsTable, replaceSettingsTable } from '../platform/settings.js'

const file = join(PROJECT_ROOT, 'README.md')
const before = readFileSync(file, 'utf8')
const after = replaceSettingsTable(before, renderSettingsTable())
if (after === before) {
  console.log('README.md: the configuration table is up to date')
} else {
  writeFileSync(file, after)
  console.log('README.md: configuration table rewritten from platform/settings.ts')
}
