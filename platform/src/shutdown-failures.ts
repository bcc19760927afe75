import { log } from './log'

/**
 * Failures the shutdown itself causes, counted instead of logged one by one.
 *
 * Why: a service stopped under overload still has handlers running when its store closes under
 * them (service-process.ts: the store closes once the bus stopped serving, or waited 10 s for
 * them in vain). Each then failed with a line and a stack of its own (`store unreachable`,
 * `bus handler failed`, `bus reply not sent`): an overload probe on FerretDB logged thousands at
 * one SIGTERM, burying what the stop itself said. From beginShutdown on, such a failure is
 * counted by kind and written as one `warn` line per kind (how many, and the first one's error
 * without its stack) every SUMMARY_EVERY_MS and when the stop ends. Any other error, and every
 * error before the stop began, is logged as before.
 */

/** A kind's count is written at least this often while the stop goes on, so a kill -9 loses little of it. */
export const SUMMARY_EVERY_MS = 5_000

/**
 * What a store or connection that was closed answers a call that was under way or came after:
 * the MongoDB driver's errors (seen closing a mongoose connection under 300 reads, on FerretDB:
 * 297 MongoExpiredSessionError, then MongoNotConnectedError for every later call), bun:sqlite's,
 * and nats.js's for a reply published on a closed or draining connection.
 */
const CLOSED_MONGO = new Set(['MongoClientClosedError', 'MongoExpiredSessionError', 'MongoTopologyClosedError', 'MongoPoolClosedError', 'MongoNotConnectedError'])
const CLOSED_SQLITE = /^(Database has closed|Cannot use a closed database)/
const CLOSED_NATS = new Set(['CONNECTION_CLOSED', 'CONNECTION_DRAINING'])

function closedUnderIt(error: unknown): boolean {
  const { name, message, code } = (error ?? {}) as { name?: unknown; message?: unknown; code?: unknown }
  return CLOSED_MONGO.has(String(name)) || CLOSED_SQLITE.test(String(message)) || CLOSED_NATS.has(String(code))
}

interface Counted {
  /** The line's fields: the kind, its part (a store's name), the first error without its stack. */
  fields: Record<string, unknown>
  failures: number
}

/** The counts by kind while the process stops; undefined before. */
let counting: Map<string, Counted> | undefined

function writeCounts(): void {
  for (const counted of counting?.values() ?? []) {
    if (counted.failures === 0) continue
    log().warn({ ...counted.fields, failures: counted.failures }, 'failures caused by the shutdown')
    counted.failures = 0
  }
}

/**
 * Marks the process as stopping (lifecycle.ts onShutdown, when the stop begins). Returns the end
 * of it: writes what is counted and stops counting. The process exits then; tests call it to
 * leave the process as it was.
 */
export function beginShutdown(everyMs = SUMMARY_EVERY_MS): () => void {
  counting ??= new Map()
  const timer = setInterval(writeCounts, everyMs)
  timer.unref()
  return () => {
    clearInterval(timer)
    writeCounts()
    counting = undefined
  }
}

/**
 * Counts `error` under `kind` (the message of the line it would have been) and `part` when the
 * process is stopping and the error is one of a closed store or connection: true then, and the
 * caller logs nothing of it. False otherwise: the caller logs it as ever.
 */
export function countedInShutdown(kind: string, error: unknown, part?: Record<string, string>): boolean {
  if (!counting || !closedUnderIt(error)) return false
  const key = part ? `${kind} ${Object.values(part).join(' ')}` : kind
  let counted = counting.get(key)
  if (!counted) {
    const { name, message } = error as { name?: unknown; message?: unknown }
    counted = { fields: { kind, ...part, err: { type: String(name), message: String(message) } }, failures: 0 }
    counting.set(key, counted)
  }
  counted.failures++
  return true
}
