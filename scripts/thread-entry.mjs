// Entry of the process's worker threads: TypeScript runs through tsx, whose loader a worker
// thread does not inherit from `node --import tsx`, so it is registered here first.
import { register } from 'tsx/esm/api'
import { workerData } from 'node:worker_threads'

register()
await import(workerData.entry)
