// The operators' CLI: talks to the admin API of a running platform over HTTP (it never opens the
// embedded data directory, so it works while the platform runs).
//   npm run admin -- jobs list | jobs run <name> | jobs status | jobs retry <id> | tenant create <name>
// METERLINE_API_URL and ADMIN_TOKEN say where and with what; see USAGE.
import { parseArgs, USAGE, UsageError } from './admin/args.js'
import { AdminApiError, AdminClient } from './admin/client.js'
import { runCommand } from './admin/commands.js'
import { adminTarget } from './admin/target.js'

let code: number
try {
  const cmd = parseArgs(process.argv.slice(2))
  code = await runCommand(cmd, new AdminClient(adminTarget()))
} catch (err) {
  if (err instanceof UsageError) {
    console.error(`${err.message}\n${USAGE}`)
    code = 2
  } else if (err instanceof AdminApiError) {
    console.error(`admin API: ${err.status ? `${err.status} ${err.code}: ` : ''}${err.message}`)
    code = 1
  } else {
    throw err
  }
}
process.exitCode = code
