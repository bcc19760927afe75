import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createNatsBus, type NatsBus } from '@lr/platform/bus-nats'
import { startNats, type NatsServer } from '../../test/harness/nats'
import { waitUntil } from '../../test/harness/ports'
import { skipReason } from '../../test/harness/servers'
import { captureLog } from './log-capture'

/**
 * Bus.resumed over NATS: called once the connection is back after a disconnect, when events
 * published meanwhile may have been missed (a resolver then forgets its cached codes).
 */
const skip = skipReason('nats-server')
describe.skipIf(skip !== null)(`NATS bus resumed${skip ? ` (${skip})` : ''}`, () => {
  let nats: NatsServer
  let bus: NatsBus
  beforeAll(async () => {
    nats = await startNats()
    bus = await createNatsBus(nats.url, 'resumed-test')
  })
  afterAll(async () => {
    await bus?.close()
    await nats?.stop()
  })

  const restarted = async () => {
    await nats.down()
    await waitUntil(async () => !(await bus.ping()), 5_000, 'the bus to notice the server is gone')
    await nats.up()
    await waitUntil(() => bus.ping(), 10_000, 'the bus to reconnect')
  }

  it('tells its listeners once per reconnect, not at the first connect nor while disconnected', async () => {
    let heard = 0
    const stop = bus.resumed!(() => void heard++)
    try {
      await bus.connection.flush()
      expect(heard).toBe(0)
      await nats.down()
      await waitUntil(async () => !(await bus.ping()), 5_000, 'the bus to notice the server is gone')
      expect(heard).toBe(0)
      await nats.up()
      await waitUntil(() => heard === 1, 10_000, 'the listener to hear the reconnect')
      await Bun.sleep(300)
      expect(heard).toBe(1)
    } finally {
      stop()
    }
    await restarted()
    expect(heard).toBe(1)
  }, 20_000)

  it('logs a listener that throws, and still tells the others, then and at the next reconnect', async () => {
    let heard = 0
    const stops = [bus.resumed!(() => {
      throw new Error('listener broke')
    }), bus.resumed!(() => void heard++)]
    const captured = captureLog()
    try {
      await restarted()
      await waitUntil(() => heard === 1, 2_000, 'the second listener')
      expect(captured.lines.find((line) => line.msg === 'a listener of the bus reconnecting failed')).toMatchObject({ err: { message: 'listener broke' } })
      await restarted()
      await waitUntil(() => heard === 2, 2_000, 'the second listener again')
    } finally {
      captured.restore()
      for (const stop of stops) stop()
    }
  }, 30_000)
})
