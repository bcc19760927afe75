import { describe, expect, it } from 'bun:test'
import { EventEmitter } from 'node:events'
import { connect, createServer } from 'node:net'
import { inUseInterrupter, type InUsePool, watchServerChecks } from '@lr/platform/mongo'
import { captureLog } from './log-capture'

/** A client as the watchdog sees it: the driver's monitoring events, and what close and connect were asked. */
function fakeClient(connectFailures = 0) {
  const events = new EventEmitter()
  const calls: string[] = []
  let failures = connectFailures
  return {
    calls,
    emit: (event: string, server = 'db-1:27017') => events.emit(event, { connectionId: server }),
    client: {
      on: (event: string, listener: (event: { connectionId: string }) => void) => events.on(event, listener),
      close: async (force?: boolean) => void calls.push(`close(${force})`),
      connect: async () => {
        calls.push('connect')
        if (failures-- > 0) throw new Error('connect ECONNREFUSED')
      },
    },
  }
}

describe('watchServerChecks', () => {
  it('leaves a client alone while its checks end, even slowly', async () => {
    const { client, calls, emit } = fakeClient()
    const stop = watchServerChecks(client, { stuckMs: 60, everyMs: 5 })
    for (let i = 0; i < 4; i++) {
      emit('serverHeartbeatStarted')
      await Bun.sleep(40)
      emit(i % 2 ? 'serverHeartbeatFailed' : 'serverHeartbeatSucceeded')
    }
    stop()
    expect(calls).toEqual([])
  })

  it('closes and connects the client again when a check has not ended in time, retrying until it connects', async () => {
    const log = captureLog()
    const { client, calls, emit } = fakeClient(2)
    const stop = watchServerChecks(client, { stuckMs: 50, everyMs: 5, retryMs: 10 })
    try {
      emit('serverHeartbeatStarted') // and nothing after it: the socket never closed
      for (let i = 0; i < 100 && !calls.includes('connect'); i++) await Bun.sleep(5)
      for (let i = 0; i < 100 && calls.length < 4; i++) await Bun.sleep(5)
      expect(calls).toEqual(['close(true)', 'connect', 'connect', 'connect'])
      // Its own lines (another test's product, still stopping, may log into the same capture).
      expect(log.lines.map((line) => line.msg).filter((msg) => msg.startsWith('MongoDB:'))).toEqual([
        'MongoDB: the check of the server has not ended; connecting again',
        'MongoDB: not connected again yet; retrying',
        'MongoDB: not connected again yet; retrying',
        'MongoDB: connected again',
      ])
      // Checks that end again: no second reconnection.
      emit('serverHeartbeatStarted')
      emit('serverHeartbeatSucceeded')
      await Bun.sleep(80)
      expect(calls).toHaveLength(4)
    } finally {
      stop()
      log.restore()
    }
  })

  it('watches each server of a replica set apart: one hung check is not hidden by the others\' answers', async () => {
    const { client, calls, emit } = fakeClient()
    const stop = watchServerChecks(client, { stuckMs: 50, everyMs: 5 })
    try {
      emit('serverHeartbeatStarted', 'db-1:27017') // hangs
      for (let i = 0; i < 12; i++) {
        emit('serverHeartbeatStarted', 'db-2:27017')
        emit('serverHeartbeatSucceeded', 'db-2:27017')
        await Bun.sleep(10)
      }
      for (let i = 0; i < 50 && !calls.includes('connect'); i++) await Bun.sleep(5)
      expect(calls).toEqual(['close(true)', 'connect'])
    } finally {
      stop()
    }
  })

  it('does nothing once stopped', async () => {
    const { client, calls, emit } = fakeClient()
    const stop = watchServerChecks(client, { stuckMs: 20, everyMs: 5 })
    stop()
    emit('serverHeartbeatStarted')
    await Bun.sleep(60)
    expect(calls).toEqual([])
  })

  it('takes a server whose check goes unanswered silentMs as silent: ends what waits on it each such check, one line per outage, until a check is answered', async () => {
    const log = captureLog()
    const interrupted: string[] = []
    const silences: string[] = []
    const { client, calls, emit } = fakeClient()
    const stop = watchServerChecks({ ...client, interruptInUse: (server) => interrupted.push(server) }, { silentMs: 30, stuckMs: 10_000, everyMs: 5, onSilence: (server, silent) => silences.push(`${server} ${silent}`) })
    try {
      emit('serverHeartbeatStarted') // unanswered
      for (let i = 0; i < 40 && interrupted.length === 0; i++) await Bun.sleep(5)
      await Bun.sleep(40) // the same check: nothing more
      emit('serverHeartbeatFailed') // the driver's own timeout; the next check hangs too
      emit('serverHeartbeatStarted')
      for (let i = 0; i < 40 && interrupted.length < 3; i++) await Bun.sleep(5)
      emit('serverHeartbeatSucceeded')
      const lines = log.lines.map((line) => line.msg).filter((msg) => msg.startsWith('MongoDB:'))
      // The failed check itself ends what waits (as before), then its successor's silence does.
      expect(interrupted).toEqual(['db-1:27017', 'db-1:27017', 'db-1:27017'])
      expect(silences).toEqual(['db-1:27017 true', 'db-1:27017 true', 'db-1:27017 false'])
      expect(lines).toEqual(['MongoDB: the server has not answered its check; its operations fail (503) until it answers', 'MongoDB: the server answers again'])
      expect(calls).toEqual([]) // no reconnection before stuckMs
    } finally {
      stop()
      log.restore()
    }
  })

  it('has the operations on a server end when a check of it fails (inUseInterrupter)', () => {
    const interrupted: string[] = []
    const { client, emit } = fakeClient()
    const stop = watchServerChecks({ ...client, interruptInUse: (server) => interrupted.push(server) })
    emit('serverHeartbeatStarted', 'db-1:27017')
    emit('serverHeartbeatSucceeded', 'db-1:27017')
    emit('serverHeartbeatStarted', 'db-2:27017')
    emit('serverHeartbeatFailed', 'db-2:27017')
    stop()
    expect(interrupted).toEqual(['db-2:27017'])
  })
})

describe('inUseInterrupter', () => {
  it("interrupts the failed server's pool, and ends a command waiting on a closed socket for a 'drain' Bun never sends", async () => {
    // Bun's write on a socket its server closed returns false and emits neither 'drain' nor 'error'.
    const server = createServer((socket) => socket.end()).listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    const socket = connect((server.address() as { port: number }).port, '127.0.0.1')
    await new Promise((resolve) => socket.once('close', resolve))
    expect(socket.write(Buffer.alloc(64))).toBe(false)
    // As the driver's writeCommand waits (its utils.once): for 'drain', or an 'error'.
    const waiting = new Promise((resolve, reject) => socket.once('drain', resolve).once('error', reject)).then(() => 'drained', (error: Error) => error.message)
    const closedError = new Error('connection 1 to db-2:27017 closed')
    const cleared: unknown[] = []
    const pool: InUsePool = { clear: (options) => void cleared.push(options), checkedOut: [{ closed: true, error: closedError, socket }, { closed: false, error: undefined, socket }] }
    const other: InUsePool = { clear: () => void cleared.push('the other server') }
    const client = { topology: { s: { servers: new Map([['db-1:27017', { pool: other }], ['db-2:27017', { pool }]]) } } }
    inUseInterrupter(client)('db-2:27017')
    expect(await Promise.race([waiting, Bun.sleep(500).then(() => 'still waiting')])).toBe('connection 1 to db-2:27017 closed')
    expect(cleared).toEqual([{ interruptInUseConnections: true }])
    inUseInterrupter({})('db-2:27017') // a driver without these internals: nothing to do, no throw
    server.close()
  })
})
