/**
 * Whether the MongoDB servers of a client answer, as the watchdog of platform/src/mongo.ts sees
 * them, and the bound it puts on each store call. No import of mongoose here: store.ts loads
 * this for every store, and the embedded default never loads mongoose.
 */
import { wrapMethods } from './method-proxy'

/**
 * The servers of one client as their checks tell (SILENT_CHECK_MS), and who waits on that. The
 * client counts as silent only while every server it has heard from is: one frozen member of a
 * replica set (a secondary, or a primary about to be replaced) must not fail every call, which
 * the driver sends to the members that answer.
 */
export interface ServerSilence {
  /** A server has left a check unanswered (true), or answered one (false). */
  set(server: string, silent: boolean): void
  /** Whether every server heard from is silent now. */
  silent(): boolean
  /** Calls `listener` when the client becomes silent. Returns its removal. */
  onSilent(listener: () => void): () => void
}

export function createServerSilence(): ServerSilence {
  /** Each server heard from, and whether it is silent. */
  const servers = new Map<string, boolean>()
  const listeners = new Set<() => void>()
  const silent = () => servers.size > 0 && [...servers.values()].every(Boolean)
  return {
    set(server, isSilent) {
      const was = silent()
      servers.set(server, isSilent)
      if (!was && silent()) for (const listener of [...listeners]) listener()
    },
    silent,
    onSilent(listener) {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
  }
}

/** The client's ServerSilence (connectMongo registers it); keyed by client, so a useDb connection finds it too. */
const silences = new WeakMap<object, ServerSilence>()
export const registerSilence = (client: object, silence: ServerSilence) => void silences.set(client, silence)
export const silenceOf = (client: object | undefined) => (client ? silences.get(client) : undefined)

/** A store call given up on because its server stopped answering; a 503 like any unreachable store (store-metrics.ts). */
export class MongoServerSilentError extends Error {
  override name = 'MongoServerSilentError'
}

/**
 * The store with each asynchronous call failing (MongoServerSilentError; `ping` answering false)
 * once its client is silent (every server it heard from), and at once while it is. The watchdog also ends the driver's operations on
 * that server, but not one waiting for a new connection to it: the handshake waits for
 * connectTimeoutMS. Nothing is told done that was not: a call given up on is an error; its write
 * may still land should the server wake up with it (as after any lost connection), which
 * retrying with the same Idempotency-Key answers. Slow calls on a server that answers its checks
 * are never cut short.
 */
export function withSilenceBound<S extends object>(target: S, silence: ServerSilence | undefined): S {
  if (!silence) return target
  return wrapMethods(target, (prop, method) => {
    // Only a call that answers with a promise is bounded: an `async` method, or one seen to
    // answer so. A synchronous one (a store's `now()`, its clock) answers as it is: given up on,
    // it had answered a rejected promise where a number was due, which nobody awaited, and the
    // unhandled rejection ended the process (bun start with the webhooks worker running).
    let answersPromises = method.constructor.name === 'AsyncFunction'
    return (self, args) => {
      // Readiness (`ping`) answers false; any other call fails.
      const givenUp = () => (prop === 'ping' ? Promise.resolve(false) : Promise.reject(new MongoServerSilentError(`the MongoDB server stopped answering (${prop})`)))
      // Not even begun while the server is silent: a write sent now could land when it wakes.
      if (answersPromises && silence.silent()) return givenUp()
      const result = method.apply(self, args)
      if (!(result instanceof Promise)) return result
      answersPromises = true
      return new Promise((resolve, reject) => {
        let settled = false
        const off = silence.onSilent(() => {
          if (settled) return
          settled = true
          off()
          result.catch(() => undefined) // it ends later (the watchdog, the connect timeout): nobody waits
          givenUp().then(resolve, reject)
        })
        const end = () => {
          settled = true
          off()
        }
        result.then(
          (ok) => {
            end()
            resolve(ok)
          },
          (error) => {
            end()
            reject(error)
          },
        )
      })
    }
  })
}
