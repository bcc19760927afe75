import { parseFlags, usageError } from './args'
import { findCommand } from './commands'

/**
 * Sends one request to the auth service and resolves with its answer (a Bus's `request`);
 * `createsStore`: the command may make the store where there is none (Command.createsStore).
 */
export type AdminCall = (subject: string, payload: unknown, opts: { createsStore: boolean }) => Promise<unknown>

/**
 * Runs one admin command line (the words after `bun run admin`) and resolves with the JSON
 * object to print. A command line that cannot be run rejects with a UsageError before `call`
 * is made; what the service refuses rejects with its AppError.
 */
export async function runAdmin(argv: string[], call: AdminCall): Promise<unknown> {
  const [group, action, ...rest] = argv
  const { command } = findCommand(group, action)
  const flags = parseFlags(rest, command.flags.map((f) => f.name), command.positional)
  const missing = command.flags.filter((f) => f.required && flags[f.name] === undefined)
  if (missing.length > 0) throw usageError(`missing ${missing.map((f) => `--${f.name}`).join(', ')}`)
  return call(command.subject, command.payload(flags), { createsStore: command.createsStore === true })
}
