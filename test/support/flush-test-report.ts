// Preloaded into every test file's process by scripts/test.sh (`--import`). With --test-force-exit,
// Node calls process.exit() as soon as its reporter closes, before the last frames of the report have
// reached stdout (nodejs/node#64833): the runner then counts fewer tests than ran, and a failure among
// them is reported only as its file's exit code. Here process.exit waits until stdout has been quiet
// for QUIET_MS with nothing queued (at most MAX_WAIT_MS), then exits.
const QUIET_MS = 50
const MAX_WAIT_MS = 2_000

// the runner passes its flags on to each file's process
if (process.execArgv.includes('--test-force-exit')) {
  // kept before any test can replace the timers (mock.timers)
  const wait = globalThis.setTimeout
  const exit = process.exit.bind(process)
  const write = process.stdout.write.bind(process.stdout)
  let lastWrite = Date.now()
  process.stdout.write = ((...args: Parameters<typeof write>) => {
    lastWrite = Date.now()
    return write(...args)
  }) as typeof process.stdout.write
  process.exit = ((code?: number | string | null) => {
    const deadline = Date.now() + MAX_WAIT_MS
    const poll = (): void => {
      const quiet = process.stdout.writableLength === 0 && Date.now() - lastWrite >= QUIET_MS
      if (quiet || Date.now() > deadline) exit(code)
      else wait(poll, 10)
    }
    poll()
  }) as typeof process.exit
}
