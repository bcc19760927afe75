import { loadConfig } from '@lr/proto'
import { createLogger, installLogger } from '@lr/platform/log'
import { keepFilesPrivate } from '@lr/platform/lifecycle'
import { type AdminConnection, connectAdmin } from './connect'
import { helpFor } from './help'
import { runAdmin } from './run-admin'

// `bun run --silent admin ...` (docs/decisions.md §2): stdout carries only the result (one JSON
// object) or the help asked for; a failure is one {"error"} line on stderr and exit 1, whatever
// failed (api-contract §2): a command line that cannot be run, a bad setting, a refusal of the
// auth service, an unreachable deployment. A command that made the SQLite store says where
// first, in one {"notice"} line on stderr, so a DATA_DIR with a typo does not go unseen.
// The auth service this may run in-process logs nothing here: its lines would mix with the JSON.
// Nor does the logger open stdout: pino's default writer there broke Bun.write of an answer over a
// pipe's 64 KiB (its first 64 KiB, then all of it again, or cut short; piped to jq, about half the
// runs of `account list --limit 1000`).
installLogger(createLogger('admin', 'silent', { write() {} }))
// The SQLite store it may create is private, as bun start's are (platform/src/lifecycle.ts).
keepFilesPrivate()
let connection: AdminConnection | undefined
let code = 0
try {
  const argv = Bun.argv.slice(2)
  const help = helpFor(argv)
  if (help !== null) await Bun.write(Bun.stdout, `${help}\n`)
  else {
    const config = loadConfig(Bun.env)
    // Connect only once the command line is valid, so a typo never waits on NATS or Mongo.
    const result = await runAdmin(argv, async (subject, payload, opts) => {
      connection = await connectAdmin(config, opts)
      if (connection.created) {
        const notice = `created a new auth database at ${connection.created}; the server must run with this DATA_DIR (${config.DATA_DIR}) to know what this command makes`
        await Bun.write(Bun.stderr, `${JSON.stringify({ notice })}\n`)
      }
      return connection.call(subject, payload)
    })
    await Bun.write(Bun.stdout, `${JSON.stringify(result)}\n`)
  }
} catch (error) {
  // Exit 1 for every failure, as the contract has it, though a process stopped by a bad setting
  // exits 2 (README "Configuration"): a script tells the kinds apart by the message, not the code.
  code = 1
  const message = error instanceof Error ? error.message : String(error)
  await Bun.write(Bun.stderr, `${JSON.stringify({ error: message })}\n`)
} finally {
  await connection?.close().catch(() => {})
}
process.exit(code)
