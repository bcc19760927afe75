import { describe, expect, it } from 'bun:test'
import { EventEmitter } from 'node:events'
import { watchServerChecks } from '@lr/platform/mongo'
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
})
