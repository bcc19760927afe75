import { AppError } from '@lr/proto'
import { errorFields, log } from './log'
import { atMostEvery } from './log-throttle'
import { secondsSince, storeDuration } from './metrics'
import { wrapMethods } from './method-proxy'
import { failedOutcome } from './outcome'
import { countedInShutdown } from './shutdown-failures'
import type { StoreHealth } from './sqlite-health'

/** The MongoDB driver's (and mongoose's) errors of a server it cannot reach or lost mid-operation. */
const UNREACHABLE_MONGO = new Set([
  'MongoNetworkError', 'MongoNetworkTimeoutError', 'MongoServerSelectionError', 'MongooseServerSelectionError',
  'MongoNotConnectedError', 'MongoTopologyClosedError', 'MongoPoolClearedError', 'MongoPoolClosedError', 'PoolClearedOnNetworkError',
  // A call given up on because its server stopped answering (mongo-silence.ts), or ended by the
  // watchdog's closing of its client to make it again (mongo.ts): the store is away for now.
  'MongoServerSilentError', 'MongoClientClosedError',
])
/**
 * SQLite's codes of a file it cannot use now: locked past the busy timeout, a full or failing
 * disk, or one it may not write (READONLY and its extended codes: a file SQLite opened read-only
 * because this process could not open it for writing, one removed under a rollback-journal
 * connection, _DBMOVED). A read-only file had been a 500 on every write, with /readyz still 200.
 */
const UNUSABLE_SQLITE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY)/

/**
 * One store's `store unreachable` lines: the first failure of an outage with its cause, then at
 * most one line per 10 s, with `repeated` (log-throttle.ts). A line per failed call had been three
 * lines a request with the request's own two, each with a stack. The count of every failure is in
 * lr_store_operation_duration_seconds (outcome "error").
 */
function unreachableLines(store: string) {
  const throttle = atMostEvery(10_000)
  return (operation: string, error: unknown) =>
    throttle((repeated) => log().warn({ store, operation, ...(repeated > 0 ? { repeated } : {}), ...errorFields(error) }, 'store unreachable'))
}

/**
 * A store that cannot be reached (its server gone, its disk full) is an outage, not a bug: the
 * caller gets 503 with Retry-After (the contract's "a part that cannot be reached"), not a 500.
 * The cause goes to the log (`logUnreachable`), for the operator.
 */
function asStoreError(store: string, operation: string, error: unknown, logUnreachable: (operation: string, error: unknown) => void, health?: StoreHealth): unknown {
  const unreachable = () => new AppError('unavailable', `the ${store} store is unreachable`, { retryAfter: 1 })
  // Closed by the process's own stop under a request still running: counted, not a line each.
  if (countedInShutdown('store closed', error, { store })) return unreachable()
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown }
  if (!UNREACHABLE_MONGO.has(String(name)) && !UNUSABLE_SQLITE.test(String(code ?? ''))) return error
  logUnreachable(operation, error)
  health?.unusable()
  return unreachable()
}

/**
 * How a store's failed calls are taken (asStoreError): an unreachable or unusable store's error
 * becomes the 503 AppError, logged as unreachableLines says, and `health` is told; any other error
 * is returned as it was. withStoreMetrics applies it to the port's calls; calls to the same store
 * made elsewhere apply it to their own errors (OpenedStore.failed): analytics' ingestion Worker
 * writes on a connection of its own, and its SQLITE_FULL had left /readyz at 200.
 */
export function storeFailures(store: string, health?: StoreHealth): (operation: string, error: unknown) => unknown {
  const logUnreachable = unreachableLines(store)
  return (operation, error) => asStoreError(store, operation, error, logUnreachable, health)
}

/**
 * The store with every asynchronous port method timed into lr_store_operation_duration_seconds
 * (store, operation, outcome: ok, refused or error, failedOutcome), and an unreachable store's error made a 503 (asStoreError), logged
 * as unreachableLines says.
 * Wrapped once where a service opens its store, so no adapter carries metrics code; synchronous
 * methods pass through untouched. With `health` (the driver's view of its file), each unreachable
 * error is reported to it and `ping` answers true only while it is ready too.
 */
export function withStoreMetrics<S extends object>(store: string, target: S, health?: StoreHealth, failed = storeFailures(store, health)): S {
  return wrapMethods(target, (prop, method) => {
    const call = health && prop === 'ping' ? withHealth(method as () => Promise<boolean>, health) : method
    return (self, args) => {
      const started = performance.now()
      const result = call.apply(self, args)
      if (!(result instanceof Promise)) return result
      return result.then(
        (ok) => {
          storeDuration.observe({ store, operation: prop, outcome: 'ok' }, secondsSince(started))
          return ok
        },
        (error) => {
          storeDuration.observe({ store, operation: prop, outcome: failedOutcome(error) }, secondsSince(started))
          throw failed(prop, error)
        },
      )
    }
  })
}

/** The port's own ping (does the connection answer), then the driver's check of its file. */
const withHealth = (ping: () => Promise<boolean>, health: StoreHealth) =>
  async function (this: unknown) {
    return (await ping.call(this)) && health.ready()
  }
