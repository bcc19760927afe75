import { parseFlags, usageError } from './args'
import { COMMANDS } from './commands'

/** Sends one request to the auth service and resolves with its answer (a Bus's `request`). */
export type AdminCall = (subject: string, payload: unknown) => Promise<unknown>

export const USAGE = `usage: bun run admin <command> [flags]; commands: ${Object.keys(COMMANDS).join(', ')}`

/**
 * Runs one admin command line (the words after `bun run admin`) and resolves with the JSON
 * object to print; rejects with an AppError whose message is the `{"error"}` to print.
 * A bad command line is refused before `call` is made.
 */
export async function runAdmin(argv: string[], call: AdminCall): Promise<unknown> {
  const [group, action, ...rest] = argv
  const command = group && action ? COMMANDS[`${group} ${action}`] : undefined
  if (!command) {
    const named = [group, action].filter(Boolean).join(' ')
    throw usageError(named ? `unknown command "${named}"; ${USAGE}` : USAGE)
  }
  const flags = parseFlags(rest, [...command.required, ...(command.optional ?? [])])
  const missing = command.required.filter((name) => flags[name] === undefined)
  if (missing.length > 0) throw usageError(`missing ${missing.map((name) => `--${name}`).join(', ')}`)
  return call(command.subject, command.payload(flags))
}
