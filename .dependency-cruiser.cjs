// `npm run lint` checks the import graph:
// - no circles, type-only imports included (a type import that closes a circle still ties the
//   two files' designs together);
// - a billing-api domain (a folder with a module.ts) is reached from outside only through its
//   index.ts (its use cases) or its *.entity.ts files (its records, the shared contract).
//   Tests are white-box and may reach in.
// - layers: platform/ and schemas/ are the floor (they import no service), and billing-api never
//   imports the scheduler above it (the job catalogue it lists and triggers is platform/job-catalogue.ts).
const fs = require('node:fs')
const path = require('node:path')

const domains = fs.readdirSync(path.join(__dirname, 'billing-api'))
  .filter((d) => fs.existsSync(path.join(__dirname, 'billing-api', d, 'module.ts')))
const domain = `^billing-api/(?:${domains.join('|')})/`
const surface = ['/index\\.ts$', '\\.entity\\.ts$']
const tests = ['\\.test\\.ts$', '^test/']

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'files that import each other in a loop', from: {}, to: { circular: true } },
    {
      name: 'domain-surface',
      severity: 'error',
      comment: "another domain's files are reached through its index.ts or its *.entity.ts",
      from: { path: '^billing-api/([^/]+)/', pathNot: tests },
      to: { path: domain, pathNot: ['^billing-api/$1/', ...surface] },
    },
    {
      name: 'outside-surface',
      severity: 'error',
      comment: "code outside billing-api (composition root, scripts, benches) uses a domain's index.ts or *.entity.ts",
      from: { pathNot: ['^billing-api/', ...tests] },
      to: { path: domain, pathNot: surface },
    },
    {
      name: 'billing-api-below-scheduler',
      severity: 'error',
      comment: "the scheduler runs billing-api's use cases; billing-api reads the job catalogue from platform/job-catalogue.ts",
      from: { path: '^billing-api/', pathNot: tests },
      to: { path: '^scheduler/' },
    },
    {
      name: 'floor-imports-no-service',
      severity: 'error',
      comment: 'platform/ and schemas/ are below every service: they import none of them',
      from: { path: '^(platform|schemas)/', pathNot: tests },
      to: { path: '^(billing-api|scheduler|aggregator|ingest|clickhouse|scripts|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
}
