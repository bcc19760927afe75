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
 */
export function createLogger(process: string, level: LogLevel = 'info'): Logger {
  const pino = loadPino()
  return pino({
    level,
    base: { process },
    messageKey: 'msg',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: () => {
      const requestId = currentRequestId()
      return requestId ? { request_id: requestId } : {}
    },
  }) as unknown as Logger
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

/**
 * An error as log fields: its name, message and stack, which JSON.stringify would drop. A
 * JetStream refusal's message is only its status (`503`), its reason is in `api_error`: that
 * reason is added, so a broker whose store is full says `insufficient resources` in every
 * line, not `503` (README "Scan events", sizing the broker's disk).
 */
export function errorFields(error: unknown): { err: { type: string; message: string; stack?: string } } {
  if (error instanceof Error || (typeof error === 'object' && error !== null && 'message' in error)) {
    const { name, message, stack } = error as Error
    const reason = (error as { api_error?: { description?: unknown } }).api_error?.description
    const text = typeof reason === 'string' && reason && !String(message).includes(reason) ? `${message}: ${reason}` : String(message)
    return { err: { type: name ?? 'Error', message: text, ...(stack ? { stack } : {}) } }
  }
  return { err: { type: typeof error, message: String(error) } }
}
