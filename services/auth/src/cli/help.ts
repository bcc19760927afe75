import { COMMANDS, type Command, findCommand, type Printed, PROGRAM } from './commands'

const synopsis = (name: string, command: Command) =>
  [PROGRAM, name, ...command.flags.map((f) => (f.required ? `--${f.name} ${f.value}` : `[--${f.name} ${f.value}]`))].join(' ')

/** A schema's fields as the help shows them: `{"team_id", "members": [{"account_id", ...}], "removed": true}`. */
function fields(schema: Printed): string {
  const field = ([name, value]: [string, Printed]) => {
    const key = JSON.stringify(name)
    if (value.properties) return `${key}: ${fields(value)}`
    if (value.items?.properties) return `${key}: [${fields(value.items)}]`
    if (value.const !== undefined) return `${key}: ${JSON.stringify(value.const)}`
    return key
  }
  return `{${Object.entries(schema.properties ?? {}).map(field).join(', ')}}`
}

/** The tool's help: every command with its one-line summary. */
export function toolHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length))
  return [
    `usage: ${PROGRAM} <command> [flags]`,
    '',
    'Acts on the deployment whose environment it shares (TRANSPORT, STORE, DATA_DIR, NATS_URL, MONGODB_URL).',
    'Prints one JSON object on stdout and exits 0; on any failure (a command line that cannot be run, a bad',
    'setting, a refusal of the auth service, an unreachable deployment) one {"error"} line on stderr, and exits 1.',
    'With TRANSPORT=memory and STORE=sqlite it opens $DATA_DIR/auth.sqlite; only account create makes that',
    'file where it is missing, and says so in one {"notice"} line on stderr.',
    '',
    'commands:',
    ...Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`),
    '',
    `${PROGRAM} <command> --help shows a command's flags.`,
  ].join('\n')
}

/** One command's help: synopsis, flags and what it prints. */
export function commandHelp(name: string, command: Command): string {
  const width = Math.max(...command.flags.map((f) => `--${f.name} ${f.value}`.length))
  return [
    `usage: ${synopsis(name, command)}`,
    '',
    `${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.`,
    '',
    'flags:',
    ...command.flags.map((f) => `  ${`--${f.name} ${f.value}`.padEnd(width)}  ${f.help}${f.required ? ' (required)' : ''}`),
    '',
    `prints: ${fields(command.prints)}`,
  ].join('\n')
}

/** The help a command line asks for (`--help`, `-h`, or `help` first), or null when it asks for none. */
export function helpFor(argv: string[]): string | null {
  const asked = argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')
  if (!asked) return null
  const words = (argv[0] === 'help' ? argv.slice(1) : argv).filter((word) => !word.startsWith('-'))
  const [group, action] = words
  if (group === undefined) return toolHelp()
  // `account --help`: every command of the group.
  const inGroup = Object.entries(COMMANDS).filter(([name]) => name.startsWith(`${group} `))
  if (action === undefined && inGroup.length > 0) return inGroup.map(([name, command]) => commandHelp(name, command)).join('\n\n')
  const { name, command } = findCommand(group, action)
  return commandHelp(name, command)
}
