// A role started by the topology supervisor stops itself (gracefully, as on SIGTERM) when the
// supervisor is gone, e.g. killed with kill -9: no role outlives it holding its port and shards.
export function stopWhenSupervisorDies(env: NodeJS.ProcessEnv = process.env): void {
  const supervisor = Number(env.METERLINE_SUPERVISOR_PID)
  if (!Number.isInteger(supervisor) || supervisor <= 0) return
  const timer = setInterval(() => {
    if (process.ppid === supervisor) return
    clearInterval(timer)
    process.kill(process.pid, 'SIGTERM')
  }, 1000)
  timer.unref()
}
