import { loadConfig } from '@lr/proto'
import { type AdminConnection, connectAdmin } from './connect'
import { runAdmin } from './run-admin'

// `bun run admin ...`: prints one JSON object on stdout and exits 0, or {"error"} on stderr and exits 1.
let connection: AdminConnection | undefined
let code = 0
try {
  const config = loadConfig(Bun.env)
  // Connect only once the command line is valid, so a typo never waits on NATS or Mongo.
  const result = await runAdmin(Bun.argv.slice(2), async (subject, payload) => {
    connection = await connectAdmin(config)
    return connection.call(subject, payload)
  })
  await Bun.write(Bun.stdout, `${JSON.stringify(result)}\n`)
} catch (error) {
  code = 1
  const message = error instanceof Error ? error.message : String(error)
  await Bun.write(Bun.stderr, `${JSON.stringify({ error: message })}\n`)
} finally {
  await connection?.close().catch(() => {})
}
process.exit(code)
