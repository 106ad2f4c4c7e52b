// Builds the console into console/dist: one ES module bundle (preact, htm, uPlot, the typed
// client) and the static files. Run at install by scripts/install-deps.sh (npm run console:build).
import { build } from 'esbuild'
import { copyFileSync, mkdirSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url))
const dist = here('./dist/')

rmSync(dist, { recursive: true, force: true })
mkdirSync(dist, { recursive: true })
await build({
  entryPoints: [here('./src/main.ts')],
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  outfile: `${dist}app.js`,
  logLevel: 'warning',
})
copyFileSync(here('./src/index.html'), `${dist}index.html`)
copyFileSync(here('./src/console.css'), `${dist}console.css`)
copyFileSync(fileURLToPath(import.meta.resolve('uplot/dist/uPlot.min.css')), `${dist}uplot.css`)
console.log(`[console] built ${dist}`)
