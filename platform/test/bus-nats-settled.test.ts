import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test'
import { createNatsBus, type NatsBus } from '@lr/platform/bus-nats'
import { metricsText } from '@lr/platform/metrics'
import { startNats, type NatsServer } from '../../test/harness/nats'
import { skipReason } from '../../test/harness/servers'
import { captureLog } from './log-capture'

/**
 * A settled publish over NATS (nats-settlers.ts): the dynamic service answers a PATCH only once
 * every resolver replica has applied it. Before, `settled` changed nothing over NATS: the publish
 * resolved once sent, whatever the subscribers did.
 */
const skip = skipReason('nats-server')
const never = new Promise<void>(() => undefined)
const unsettled = async () => Number(/^lr_bus_events_unsettled_total (\d+)/m.exec(await metricsText())?.[1] ?? 0)
/** What a publish did within `ms`: resolved, or still waiting. */
const within = (ms: number, publish: Promise<void>) => Promise.race([publish.then(() => 'settled'), Bun.sleep(ms).then(() => 'waiting')])

describe.skipIf(skip !== null)(`settled publishes over NATS${skip ? ` (${skip})` : ''}`, () => {
  let server: NatsServer
  const buses: NatsBus[] = []
  const bus = async (settleTimeoutMs = 5_000) => {
    const made = await createNatsBus(server.url, 'settled-test', { settleTimeoutMs })
    buses.push(made)
    return made
  }
  /** Round trips on every bus, in turns, so presences, asks and their answers have all arrived. */
  const exchanged = async (...all: NatsBus[]) => {
    for (let round = 0; round < 3; round++) for (const one of all) await one.connection.flush()
  }

  beforeAll(async () => {
    server = await startNats()
  })
  afterEach(async () => {
    await Promise.all(buses.splice(0).map((one) => one.connection.close()))
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('resolves once a settler in another connection has handled the event', async () => {
    const settler = await bus()
    const applied: string[] = []
    settler.subscribe('t.changed.*', async (event) => {
      await Bun.sleep(300)
      applied.push((event as { code: string }).code)
    }, { settles: true })
    const publisher = await bus() // learns of the settler by asking, not by its next presence (2 s)
    await exchanged(publisher, settler)
    const started = performance.now()
    await publisher.publish('t.changed.abc', { code: 'abc' }, { settled: true })
    expect(applied).toEqual(['abc'])
    expect(performance.now() - started).toBeGreaterThanOrEqual(250)
    // A plain publish still goes at once.
    expect(await within(100, publisher.publish('t.changed.def', { code: 'def' }))).toBe('settled')
  })

  it('waits for every settler of the subject, and for no plain subscriber or settler of another subject', async () => {
    const publisher = await bus()
    const [first, second, plain, other] = [await bus(), await bus(), await bus(), await bus()]
    const applied: string[] = []
    first.subscribe('t.changed.*', async () => void applied.push('first'), { settles: true })
    second.subscribe('t.changed.>', async () => {
      await Bun.sleep(200)
      applied.push('second')
    }, { settles: true })
    plain.subscribe('t.changed.*', () => never)
    other.subscribe('t.other.*', () => never, { settles: true })
    await exchanged(publisher, first, second, plain, other)
    expect(await within(2_000, publisher.publish('t.changed.x', {}, { settled: true }))).toBe('settled')
    expect(applied.sort()).toEqual(['first', 'second'])
  })

  it('gives up on a settler that does not answer in time, counts and logs it, and does not wait for it again until it announces itself', async () => {
    const publisher = await bus(300)
    const hung = await bus()
    hung.subscribe('t.changed.*', () => never, { settles: true })
    await exchanged(publisher, hung)
    const before = await unsettled()
    const logged = captureLog()
    try {
      const started = performance.now()
      await publisher.publish('t.changed.a', {}, { settled: true })
      expect(performance.now() - started).toBeGreaterThanOrEqual(280)
      expect(await unsettled()).toBe(before + 1)
      expect(logged.lines.some((line) => line.msg.startsWith('a subscriber did not settle an event in time'))).toBe(true)
      // Late once: the next change does not wait for it.
      expect(await within(100, publisher.publish('t.changed.b', {}, { settled: true }))).toBe('settled')
      expect(await unsettled()).toBe(before + 1)
    } finally {
      logged.restore()
    }
  })

  it('answers a failed handler at once, and logs it', async () => {
    const publisher = await bus()
    const failing = await bus()
    failing.subscribe('t.changed.*', async () => {
      throw new Error('cannot apply')
    }, { settles: true })
    await exchanged(publisher, failing)
    const logged = captureLog()
    try {
      expect(await within(1_000, publisher.publish('t.changed.a', {}, { settled: true }))).toBe('settled')
      expect(logged.lines.some((line) => line.msg === 'a subscriber failed to handle a settled event')).toBe(true)
    } finally {
      logged.restore()
    }
  })

  it('does not wait for a settler that stopped serving or unsubscribed', async () => {
    const publisher = await bus()
    const leaving = await bus()
    const unsubscribing = await bus()
    leaving.subscribe('t.changed.*', () => never, { settles: true })
    const stop = unsubscribing.subscribe('t.changed.*', () => never, { settles: true })
    await exchanged(publisher, leaving, unsubscribing)
    await leaving.stopServing()
    stop()
    await exchanged(publisher, leaving, unsubscribing)
    expect(await within(1_000, publisher.publish('t.changed.a', {}, { settled: true }))).toBe('settled')
  })
})
