import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { AppError, type Bus } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { createNatsBus } from '@lr/platform/bus-nats'
import { metricsText } from '@lr/platform/metrics'
import { sample } from '../../test/harness/metrics'
import { startNats } from '../../test/harness/nats'
import { skipReason } from '../../test/harness/servers'
import { captureLog } from './log-capture'

/** What each handler does, by the last token of its subject. */
const HANDLERS: Record<string, () => Promise<unknown>> = {
  found: async () => 'here',
  missing: async () => { throw new AppError('not_found', 'no such thing') },
  invalid: async () => { throw new AppError('bad_request', 'name is required') },
  crash: async () => { throw new Error('the disk is on fire') },
  away: async () => { throw new AppError('unavailable', 'the things store is unreachable', { retryAfter: 1 }) },
}

const OUTCOMES = ['ok', 'refused', 'error', 'timeout', 'unavailable']

/**
 * Over each bus, a request answered with a 4xx counts as `refused` in both bus histograms, so
 * `error` (and the caller's timeout and unavailable) is left to the product's own failures:
 * what an operator's error-rate alert should page on.
 */
function outcomesOver(name: string, connect: () => Promise<{ client: Bus; server: Bus; close(): Promise<void> }>) {
  describe(`bus outcomes: ${name}`, () => {
    let buses: Awaited<ReturnType<typeof connect>>
    // Subjects of this case alone: the registry is the test process's, shared by every file.
    const prefix = `outcome.${name}.${Date.now()}`
    beforeAll(async () => {
      buses = await connect()
      for (const [last, handler] of Object.entries(HANDLERS)) buses.server.serve(`${prefix}.${last}`, handler, { queue: 'outcome' })
      await buses.server.ping()
    })
    afterAll(() => buses?.close())

    it('counts a 4xx answer as refused and any other failure as error, for the caller and the handler', async () => {
      const { restore } = captureLog() // the crash's `bus handler failed` line
      try {
        for (const last of Object.keys(HANDLERS)) await buses.client.request(`${prefix}.${last}`, {}).catch(() => null)
        await buses.client.requestJson(`${prefix}.missing`, {}).catch(() => null)
      } finally {
        restore()
      }
      const metrics = await metricsText()
      const counts = (histogram: string) =>
        Object.fromEntries(Object.keys(HANDLERS).map((last) => [last, OUTCOMES.flatMap((outcome) => {
          const count = sample(metrics, `${histogram}_count{subject="${prefix}.${last}",outcome="${outcome}"}`)
          return count === undefined ? [] : [`${outcome} ${count}`]
        })]))
      expect(counts('lr_bus_request_duration_seconds')).toEqual({ found: ['ok 1'], missing: ['refused 2'], invalid: ['refused 1'], crash: ['error 1'], away: ['unavailable 1'] })
      expect(counts('lr_bus_handler_duration_seconds')).toEqual({ found: ['ok 1'], missing: ['refused 2'], invalid: ['refused 1'], crash: ['error 1'], away: ['error 1'] })
    })
  })
}

outcomesOver('in-process', async () => {
  const bus = createLocalBus()
  return { client: bus, server: bus, close: () => bus.close() }
})

const skip = skipReason('nats-server')
if (skip) describe.skip(`bus outcomes: NATS (${skip})`, () => {})
else
  outcomesOver('nats', async () => {
    const nats = await startNats()
    const [client, server] = await Promise.all([createNatsBus(nats.url, 'outcome-client'), createNatsBus(nats.url, 'outcome-server')])
    return {
      client,
      server,
      async close() {
        await Promise.all([client.close(), server.close()])
        await nats.stop()
      },
    }
  })
