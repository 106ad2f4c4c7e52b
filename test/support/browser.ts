// A real browser for the console's tests: Debian's chromium (scripts/install-deps.sh installs
// it) driven by playwright-core, which never downloads a browser of its own. Each launch gets a
// fresh profile directory, removed on close.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

export interface TestBrowser {
  context: BrowserContext
  close(): Promise<void>
}

export async function launchChromium(viewport = { width: 1280, height: 900 }): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'meterline-chromium-'))
  // launchPersistentContext is playwright's way to pass --user-data-dir; headless adds --headless.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync',
    ],
  })
  return {
    context,
    async close() {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}
