import { usageError } from './args'
import { COMMANDS, type Command } from './commands'

const PROGRAM = 'bun run --silent admin'

const synopsis = (name: string, command: Command) =>
  [PROGRAM, name, ...command.flags.map((f) => (f.required ? `--${f.name} ${f.value}` : `[--${f.name} ${f.value}]`))].join(' ')

/** The tool's help: every command with its one-line summary. */
export function toolHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length))
  return [
    `usage: ${PROGRAM} <command> [flags]`,
    '',
    'Acts on the deployment whose environment it shares (TRANSPORT, STORE, DATA_DIR, NATS_URL, MONGODB_URL).',
    'Prints one JSON object on stdout and exits 0; on failure one {"error"} line on stderr, and exits',
    '1 (refused by the auth service, or unreachable) or 2 (a command line that cannot be run).',
    '',
    'commands:',
    ...Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`),
    '',
    `${PROGRAM} <command> --help shows a command's flags.`,
  ].join('\n')
}

/** One command's help: synopsis, flags and what it prints. */
export function commandHelp(name: string): string {
  const command = COMMANDS[name]!
  const width = Math.max(...command.flags.map((f) => `--${f.name} ${f.value}`.length))
  return [
    `usage: ${synopsis(name, command)}`,
    '',
    `${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.`,
    '',
    'flags:',
    ...command.flags.map((f) => `  ${`--${f.name} ${f.value}`.padEnd(width)}  ${f.help}${f.required ? ' (required)' : ''}`),
    '',
    `prints: ${command.prints}`,
  ].join('\n')
}

/** The help a command line asks for (`--help`, `-h`, or `help` first), or null when it asks for none. */
export function helpFor(argv: string[]): string | null {
  const asked = argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')
  if (!asked) return null
  const words = (argv[0] === 'help' ? argv.slice(1) : argv).filter((word) => !word.startsWith('-'))
  const [group, action] = words
  if (group === undefined) return toolHelp()
  if (action !== undefined && COMMANDS[`${group} ${action}`]) return commandHelp(`${group} ${action}`)
  // `account --help`: every command of the group.
  const inGroup = Object.keys(COMMANDS).filter((name) => name.startsWith(`${group} `))
  if (action === undefined && inGroup.length > 0) return inGroup.map(commandHelp).join('\n\n')
  throw usageError(`unknown command "${[group, action].filter(Boolean).join(' ')}"; ${PROGRAM} --help lists the commands`)
}
