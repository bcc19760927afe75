import type pinoModule from 'pino'
import type { LogLevel, Logger } from '@lr/proto'
import { currentRequestId } from './request-context'

// pino is loaded by the first createLogger, not with this file: a resolver thread logs through
// its main thread (installLogger) and never loads it, and every module a thread loads is
// resident in its own heap (services/dynamic/src/resolver/thread.ts).
const loadPino = (): typeof pinoModule => require('pino')

/**
 * The process's logger: one JSON object per line on stdout, with `level` as a word, `time` in
 * ISO 8601, the `process` name, and the request_id of the request the line belongs to (see
 * request-context.ts). Each main.ts creates it once from LOG_LEVEL and installs it.
 * `destination`: where lines go instead of pino's default, its own writer on stdout.
 */
export function createLogger(process: string, level: LogLevel = 'info', destination?: { write(line: string): void }): Logger {
  const pino = loadPino()
  const options: pinoModule.LoggerOptions = {
    level,
    base: { process },
    messageKey: 'msg',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    serializers: { err: errorLogFields },
    mixin: () => {
      const requestId = currentRequestId()
      return requestId ? { request_id: requestId } : {}
    },
  }
  return (destination ? pino(options, destination) : pino(options)) as unknown as Logger
}

let installed: Logger | undefined

/** Makes `logger` the one that shared code (bus, scan pipeline, services) writes to. */
export function installLogger(logger: Logger): Logger {
  installed = logger
  return logger
}

/** Creates the process's logger from LOG_LEVEL and installs it: the first thing a main.ts does. */
export const startLogging = (process: string, level: LogLevel): Logger => installLogger(createLogger(process, level))

/** The logger main.ts installed (before that: an info-level default). */
export const log = (): Logger => (installed ??= createLogger('library-records'))

/** An error as a log line's `err`: its class (`type`), its `code` when it has one, its message and stack. */
export interface ErrorLogFields {
  type: string
  code?: string | number
  message: string
  stack?: string
}

/**
 * An error as log fields: its class, code, message and stack, which JSON.stringify would drop. A
 * JetStream refusal's message is only its status (`503`), its reason is in `api_error`: that
 * reason is added, so a broker whose store is full says `insufficient resources` in every
 * line, not `503` (README "Scan events", sizing the broker's disk).
 */
export function errorFields(error: unknown): { err: ErrorLogFields } {
  if (error instanceof Error || (typeof error === 'object' && error !== null && 'message' in error)) {
    const { message, stack, code } = error as Error & { code?: unknown }
    const coded = typeof code === 'string' || typeof code === 'number' ? { code } : {}
    const reason = (error as { api_error?: { description?: unknown } }).api_error?.description
    const text = typeof reason === 'string' && reason && !String(message).includes(reason) ? `${message}: ${reason}` : String(message)
    return { err: { type: errorType(error), ...coded, message: text, ...(stack ? { stack } : {}) } }
  }
  return { err: { type: typeof error, message: String(error) } }
}

/**
 * An error's class as its lines name it: its `name` (SQLiteError, NatsError, AppError...), or,
 * where that is the bare `Error` of a subclass that keeps it (StartupError), its constructor's.
 */
function errorType(error: object): string {
  const { name } = error as { name?: unknown }
  if (typeof name === 'string' && name !== '' && name !== 'Error') return name
  return error instanceof Error ? error.constructor.name || 'Error' : 'Error'
}

/**
 * pino's `err` serializer. Its own named the type after the value's constructor: "Object" for
 * every `err` errorFields had made (the class it had named lost), and for one that came from a
 * resolver thread or a Worker, which carry errors as plain objects. Fields already made pass as
 * they are; anything else (an Error itself, a thrown value) is made so.
 */
function errorLogFields(value: unknown): unknown {
  const made = typeof value === 'object' && value !== null && !(value instanceof Error) && typeof (value as { type?: unknown }).type === 'string'
  return made ? value : errorFields(value).err
}
