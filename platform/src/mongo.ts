import mongoose, { type Connection } from 'mongoose'
import { errorFields, log } from './log'
import { createServerSilence, registerSilence } from './mongo-silence'

/** How long the driver's check of the server may go unanswered before the client is made again. */
export const STUCK_CHECK_MS = 12_000
/**
 * How often the driver checks each server (heartbeatFrequencyMS; its default is 10 s). A check
 * is one `hello` on a connection of its own, answered without touching any collection, so a
 * server busy with slow writes still answers it at once: one a second costs nothing.
 */
export const CHECK_EVERY_MS = 1_000
/**
 * A check unanswered this long means the server has stopped answering (a frozen process, a
 * network path that went silent without closing): the operations waiting on it are ended and
 * new ones fail at once, each a 503, until a check is answered again. Without it they waited for
 * the driver's own check to time out (connectTimeoutMS, 30 s) or for the watchdog's
 * reconnection (12 s), so an API request hung until the gateway's 10 s deadline (504), and
 * analytics' batch and a graceful stop waited with it. No limit is put on an operation itself:
 * a slow write on a server that answers its checks (FerretDB under load took 4-10 s for a batch
 * of 50 counter updates) runs to its end; only a silent server is given up on.
 */
export const SILENT_CHECK_MS = 5_000
/** Between two attempts to connect again after that, while the server does not answer. */
const RECONNECT_RETRY_MS = 1_000

/** What the watchdog needs of a MongoClient: its monitoring events (each names its server), close and connect. */
export interface MonitoredClient {
  on(event: 'serverHeartbeatStarted' | 'serverHeartbeatSucceeded' | 'serverHeartbeatFailed', listener: (event: { connectionId: string }) => void): unknown
  close(force?: boolean): Promise<void>
  connect(): Promise<unknown>
  /** Ends every operation in use on a connection to `server` (host:port) made before now (inUseInterrupter). */
  interruptInUse?(server: string): void
}

/** What inUseInterrupter reaches of the driver's pool (the CMAP specification's names). */
export interface InUsePool {
  clear?(options: { interruptInUseConnections: boolean }): void
  checkedOut?: Iterable<{ closed?: boolean; error?: unknown; socket?: { emit(event: 'error', error: unknown): unknown } }>
}

/**
 * Ends the operations in use on connections to a server whose check just failed. The driver
 * interrupts them itself only after a check that timed out; after one the server refused (it is
 * gone) it clears the pool but leaves them waiting, each for its own connection to fail:
 * - on a connection still open, for an answer (a relay that neither answers nor closes, in
 *   platform/test/mongo-in-flight.test.ts): pool.clear's interruptInUseConnections ends them with
 *   the driver's retryable PoolClearedOnNetworkError;
 * - on one already closed, for ever: under Bun a command written to a socket whose server had
 *   just closed it waits for a 'drain' that never comes (Bun's write returns false and emits no
 *   error; the driver's close only ends reads). A stop of FerretDB left one such read for ever in
 *   1 of 15 to 40 tries. The connection's own error, emitted on its socket, ends that wait.
 * A driver without these internals makes this a no-op, which the tests show.
 */
export function inUseInterrupter(client: unknown): (server: string) => void {
  return (server) => {
    const pool = (client as { topology?: { s?: { servers?: Map<string, { pool?: InUsePool }> } } }).topology?.s?.servers?.get(server)?.pool
    if (!pool) return
    pool.clear?.({ interruptInUseConnections: true })
    for (const connection of pool.checkedOut ?? []) if (connection.closed && connection.error) connection.socket?.emit('error', connection.error)
  }
}

/**
 * Makes the client again when its check of the server hangs. Under Bun, a check that began as
 * the server went away (FerretDB killed and started again under load) could wait forever: its
 * socket never closed nor timed out, so the driver never looked at the server again, its pool
 * stayed cleared, and every operation failed until the process was restarted (bench/ANALYSIS.md,
 * twenty-ninth session: 4 of 8 restarts of the server). A check (connectTimeoutMS, 10 s at
 * most) that has not ended after STUCK_CHECK_MS is taken as hung: the client is closed and
 * connected again, with the same Db and Collection objects, which every adapter keeps. Returns
 * a stop (the connection's own close calls it).
 */
export function watchServerChecks(
  client: MonitoredClient,
  options: { stuckMs?: number; silentMs?: number; retryMs?: number; everyMs?: number; onSilence?: (server: string, silent: boolean) => void } = {},
): () => void {
  const { stuckMs = STUCK_CHECK_MS, silentMs = SILENT_CHECK_MS, retryMs = RECONNECT_RETRY_MS, everyMs = 250, onSilence } = options
  /** When each server's check under way began (a replica set's members are checked apart). */
  const checking = new Map<string, number>()
  /** Servers taken as silent (silentMs), until one of their checks is answered; and the check that showed it last. */
  const silent = new Map<string, number>()
  let reconnecting = false
  let stopped = false
  client.on('serverHeartbeatStarted', ({ connectionId }) => void (checking.has(connectionId) || checking.set(connectionId, performance.now())))
  client.on('serverHeartbeatSucceeded', ({ connectionId }) => {
    checking.delete(connectionId)
    // Every answer, not only the first after a silence: the client is silent only while every
    // server it heard from is (mongo-silence.ts), so each must be heard from.
    onSilence?.(connectionId, false)
    if (!silent.delete(connectionId)) return
    log().info({ server: connectionId }, 'MongoDB: the server answers again')
  })
  client.on('serverHeartbeatFailed', ({ connectionId }) => {
    checking.delete(connectionId)
    // The server did not answer its check: whatever waits on a connection to it ends now.
    client.interruptInUse?.(connectionId)
  })

  async function connectAgain(): Promise<void> {
    while (!stopped) {
      try {
        await client.connect()
        log().info({}, 'MongoDB: connected again')
        return
      } catch (error) {
        log().warn(errorFields(error), 'MongoDB: not connected again yet; retrying')
        await Bun.sleep(retryMs)
      }
    }
  }

  async function reconnect(waited: number): Promise<void> {
    reconnecting = true
    log().warn({ waited_ms: Math.round(waited) }, 'MongoDB: the check of the server has not ended; connecting again')
    // A close that hangs on the same sockets must not hold the reconnection.
    const closing = client.close(true).catch(() => undefined)
    const closedInTime = await Promise.race([closing.then(() => true), Bun.sleep(2_000).then(() => false)])
    await connectAgain()
    checking.clear()
    reconnecting = false
    if (closedInTime) return
    // That close waits on the hung server (it ends the client's sessions there first) and ends
    // once the server answers again, dropping the client's connections then, those the connect
    // above kept too (it found the old ones still open); a closed client never connects by
    // itself. Every operation had failed from then on, for good ('Client must be connected
    // before running operations': dynamic and webhooks, after FerretDB was frozen 15 s). A
    // connect of a connected client does nothing, so whenever the close ends, connect again.
    void closing.then(() => {
      if (stopped) return
      log().warn({}, 'MongoDB: the close of the hung client ended late; connecting again')
      return connectAgain()
    })
  }

  /**
   * Ends what waits on a server whose check has gone unanswered for silentMs, once per check.
   * Decided a turn later: after a stall of this process's own event loop the answer may be
   * waiting in the socket, read before a timer of the next turn (as the Redis limiter does).
   */
  function giveUpOnSilent(): void {
    const now = performance.now()
    const due = [...checking].filter(([server, since]) => silent.get(server) !== since && now - since >= silentMs)
    if (due.length > 0)
      setTimeout(() => {
        for (const [server, since] of due) {
          if (stopped || checking.get(server) !== since || silent.get(server) === since) continue
          // One line per outage; every check that goes unanswered in it (the client made again
          // by the watchdog checks anew, on a pool of its own) ends what waits then.
          if (!silent.has(server)) log().warn({ server, waited_ms: Math.round(performance.now() - since) }, 'MongoDB: the server has not answered its check; its operations fail (503) until it answers')
          silent.set(server, since)
          onSilence?.(server, true)
          // Those under way end (the driver's retry meets the cleared pool and fails at once), and
          // the pool refuses new ones until a check is answered and the driver makes it ready.
          client.interruptInUse?.(server)
        }
      }, 0)
  }

  const timer = setInterval(() => {
    if (stopped || checking.size === 0) return
    giveUpOnSilent()
    if (reconnecting) return
    const waited = performance.now() - Math.min(...checking.values())
    if (waited >= stuckMs) void reconnect(waited)
  }, everyMs)
  timer.unref?.()
  return () => {
    stopped = true
    clearInterval(timer)
  }
}

/**
 * One mongoose connection per process; every Mongo adapter of that process shares it. `silentMs`
 * is for tests only: a test that holds a client's every packet to stand for a paused process
 * (whose own timers stop with it, so it never takes its server as silent) sets it past its hold.
 */
export async function connectMongo(url: string, options: { silentMs?: number } = {}): Promise<Connection> {
  const connection = mongoose.createConnection(url, {
    serverSelectionTimeoutMS: 5000,
    heartbeatFrequencyMS: CHECK_EVERY_MS,
    autoIndex: false,
  })
  // A URL the driver cannot parse (a password with an unescaped `/`) makes no client: its error
  // is the connection's rejection. Watching the missing client had thrown `undefined is not an
  // object (evaluating 'client.on')` instead, and left the driver's own error unhandled.
  if (!connection.getClient()) {
    await connection.asPromise()
    throw new Error('MongoDB: no client was made for MONGODB_URL')
  }
  const client = connection.getClient()
  const silence = createServerSilence()
  registerSilence(client, silence)
  const stop = watchServerChecks({
    on: client.on.bind(client) as MonitoredClient['on'],
    close: (force) => client.close(force),
    connect: () => client.connect(),
    interruptInUse: inUseInterrupter(client),
  }, { onSilence: silence.set, silentMs: options.silentMs })
  // The process's own close stops the watchdog. Not on the connection's 'close' event: the
  // watchdog's own reconnection closes the client too, and must go on watching.
  const close = connection.close.bind(connection)
  connection.close = ((force?: boolean) => {
    stop()
    return close(force)
  }) as typeof connection.close
  try {
    await connection.asPromise()
  } catch (error) {
    stop()
    throw error
  }
  return connection
}
