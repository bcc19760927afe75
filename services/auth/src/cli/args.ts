import { controlCharacterProblem } from '@lr/proto'

/**
 * A command line that cannot be run as typed: an unknown command, a missing, repeated or unknown
 * flag, a value the flag cannot take. It is found before anything connects, so a typo never
 * waits on NATS or MongoDB; like every failure, it exits 1 with its message as {"error"}
 * (docs/decisions.md §2).
 */
export class UsageError extends Error {
  override name = 'UsageError'
}

export const usageError = (message: string) => new UsageError(message)

/**
 * Reads `--name value` and `--name=value` pairs. Every flag must be in `allowed`, appear once
 * and carry a non-empty value; anything else is a usage error. With `positional`, one bare word
 * (before or after the flags) is the value of that flag.
 */
export function parseFlags(args: string[], allowed: readonly string[], positional?: string): Record<string, string> {
  const flags: Record<string, string> = {}
  const set = (name: string, value: string | undefined) => {
    if (!allowed.includes(name)) throw usageError(`unknown flag --${name}; this command takes ${allowed.map((f) => `--${f}`).join(', ') || 'no flags'}`)
    if (name in flags) throw usageError(`--${name} is given twice`)
    if (value === undefined || value.trim() === '') throw usageError(`--${name} needs a value`)
    flags[name] = value
  }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (!arg.startsWith('--')) {
      if (positional === undefined) throw usageError(`unexpected argument "${arg}"`)
      if (positional in flags) throw usageError(`unexpected argument "${arg}": the ${positional} is already given (${flags[positional]})`)
      set(positional, arg)
      continue
    }
    const eq = arg.indexOf('=')
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
    let value: string | undefined
    if (eq !== -1) value = arg.slice(eq + 1)
    else if (args[i + 1] !== undefined && !args[i + 1]!.startsWith('--')) value = args[++i]
    set(name, value)
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

/** A whole number from `min` to `max`. */
export function integerIn(flag: string, value: string, min: number, max: number): number {
  const n = /^\d{1,9}$/.test(value) ? Number(value) : Number.NaN
  if (n >= min && n <= max) return n
  throw usageError(`--${flag} must be a whole number from ${min} to ${max}`)
}

/**
 * A name of 1 to `max` characters (code points) after trimming and without control characters,
 * as the service takes it; else a usage error.
 */
export function nameOf(flag: string, value: string, max: number): string {
  if ([...value.trim()].length > max) throw usageError(`--${flag} must be 1 to ${max} characters`)
  const problem = controlCharacterProblem(`--${flag}`, value.trim())
  if (problem) throw usageError(problem)
  return value
}
