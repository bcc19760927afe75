import { AppError } from '@lr/proto'

/** Thrown for a command line that cannot be run; its message goes to stderr as {"error"}. */
export const usageError = (message: string) => new AppError('bad_request', message)

/**
 * Reads `--name value` and `--name=value` pairs. Every flag must be in `allowed`, appear once
 * and carry a non-empty value; anything else is a usage error.
 */
export function parseFlags(args: string[], allowed: readonly string[]): Record<string, string> {
  const flags: Record<string, string> = {}
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (!arg.startsWith('--')) throw usageError(`unexpected argument "${arg}"`)
    const eq = arg.indexOf('=')
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
    let value: string | undefined
    if (eq !== -1) value = arg.slice(eq + 1)
    else if (args[i + 1] !== undefined && !args[i + 1]!.startsWith('--')) value = args[++i]
    if (!allowed.includes(name)) throw usageError(`unknown flag --${name}; this command takes ${allowed.map((f) => `--${f}`).join(', ')}`)
    if (name in flags) throw usageError(`--${name} is given twice`)
    if (value === undefined || value.trim() === '') throw usageError(`--${name} needs a value`)
    flags[name] = value
  }
  return flags
}

/** The value when it is one of `choices`, else a usage error naming them. */
export function oneOf<T extends string>(flag: string, value: string, choices: readonly T[]): T {
  if ((choices as readonly string[]).includes(value)) return value as T
  throw usageError(`--${flag} must be one of ${choices.join(', ')}`)
}

/** `--api-grant-until`: epoch seconds, or `none` to clear the grant. */
export function grantUntil(value: string): number | null {
  if (value === 'none') return null
  if (/^\d{1,12}$/.test(value)) return Number(value)
  throw usageError('--api-grant-until must be epoch seconds or "none"')
}
