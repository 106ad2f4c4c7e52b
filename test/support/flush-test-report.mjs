// Preloaded by scripts/test.sh (`--import`) into the test runner and every test file's process.
// With --test-force-exit, Node calls process.exit() as soon as its reporter closes, before the last
// frames of the report have reached stdout (nodejs/node#64833): the runner then counts fewer tests
// than ran, and a failure among them is reported only as its file's exit code. Here process.exit
// waits until stdout has been quiet for QUIET_MS with nothing queued (at most MAX_WAIT_MS), then exits.
// Plain JavaScript: worker threads inherit the --import but not tsx's loader (scripts/thread-entry.mjs);
// in a worker process.exit ends the thread only and is left alone.
import { isMainThread } from 'node:worker_threads'

const QUIET_MS = 50
const MAX_WAIT_MS = 2_000

// the runner passes its flags on to each file's process
if (isMainThread && process.execArgv.includes('--test-force-exit')) {
  // kept before any test can replace the timers (mock.timers)
  const wait = globalThis.setTimeout
  const exit = process.exit.bind(process)
  const write = process.stdout.write.bind(process.stdout)
  let lastWrite = Date.now()
  process.stdout.write = (...args) => {
    lastWrite = Date.now()
    return write(...args)
  }
  process.exit = (code) => {
    const deadline = Date.now() + MAX_WAIT_MS
    const poll = () => {
      const quiet = process.stdout.writableLength === 0 && Date.now() - lastWrite >= QUIET_MS
      if (quiet || Date.now() > deadline) exit(code)
      else wait(poll, 10)
    }
    poll()
  }
}
