/**
 * Whether the MongoDB servers of a client answer, as the watchdog of platform/src/mongo.ts sees
 * them, and the bound it puts on each store call. No import of mongoose here: store.ts loads
 * this for every store, and the embedded default never loads mongoose.
 */
import { wrapMethods } from './method-proxy'

/** The servers of one client that have left a check unanswered (SILENT_CHECK_MS), and who waits on that. */
export interface ServerSilence {
  /** A server is silent (true) or answers again (false). */
  set(server: string, silent: boolean): void
  /** Whether some server is silent now. */
  silent(): boolean
  /** Calls `listener` when some server is taken as silent. Returns its removal. */
  onSilent(listener: () => void): () => void
}

export function createServerSilence(): ServerSilence {
  const silent = new Set<string>()
  const listeners = new Set<() => void>()
  return {
    set(server, isSilent) {
      if (!isSilent) return void silent.delete(server)
      silent.add(server)
      for (const listener of [...listeners]) listener()
    },
    silent: () => silent.size > 0,
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
 * once a server of its client is silent, and at once while one is. The watchdog also ends the driver's operations on
 * that server, but not one waiting for a new connection to it: the handshake waits for
 * connectTimeoutMS. Nothing is told done that was not: a call given up on is an error; its write
 * may still land should the server wake up with it (as after any lost connection), which
 * retrying with the same Idempotency-Key answers. Slow calls on a server that answers its checks
 * are never cut short.
 */
export function withSilenceBound<S extends object>(target: S, silence: ServerSilence | undefined): S {
  if (!silence) return target
  return wrapMethods(target, (prop, method) => (self, args) => {
    // Readiness (`ping`) answers false; any other call fails.
    const givenUp = () => (prop === 'ping' ? Promise.resolve(false) : Promise.reject(new MongoServerSilentError(`the MongoDB server stopped answering (${prop})`)))
    // Not even begun while the server is silent: a write sent now could land when it wakes.
    if (silence.silent()) return givenUp()
    const result = method.apply(self, args)
    if (!(result instanceof Promise)) return result
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
  })
}
