import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { connect, type JetStreamManager, type NatsConnection } from 'nats'
import { startNats, type NatsServer } from '../../test/harness/nats'
import { skipReason } from '../../test/harness/servers'
import { durableStream, ensureStream, isSubjectOverlap, openBucket } from '@lr/platform/jetstream-streams'

const skip = skipReason('nats-server')
if (skip) describe.skip(`stream and bucket creation on JetStream (${skip})`, () => {})
else
  describe('stream and bucket creation when other processes create the same at the same moment', () => {
    let server: NatsServer
    let nc: NatsConnection
    let jsm: JetStreamManager
    /** The refusal nats-server gives when a stream of another name holds the subjects. */
    let overlap: unknown

    beforeAll(async () => {
      server = await startNats({ jetstream: true })
      nc = await connect({ servers: server.url })
      jsm = await nc.jetstreamManager()
      await jsm.streams.add(durableStream('HOLDER', ['held.>']))
      overlap = await jsm.streams.add(durableStream('OTHER', ['held.>'])).catch((error) => error)
    })
    afterAll(async () => {
      await nc?.close()
      await server?.stop()
    })

    it('knows the server\'s subject-overlap refusal from other errors', async () => {
      expect(isSubjectOverlap(overlap)).toBe(true)
      const notFound = await jsm.streams.info('MISSING').catch((error) => error)
      expect(isSubjectOverlap(notFound)).toBe(false)
    })

    it('takes the stream another process registered while this one\'s add was refused, and aligns its settings', async () => {
      const wanted = durableStream('RACED', ['raced.>'])
      // The competitor's stream lands between this process's lookup and its add, whose answer is
      // the refusal the server gives in that moment.
      const racing = Object.create(jsm) as JetStreamManager
      racing.streams = Object.create(jsm.streams)
      racing.streams.add = async () => {
        await jsm.streams.add({ ...wanted, duplicate_window: 1_000_000_000 })
        throw overlap
      }
      expect(await ensureStream(racing, wanted)).toBe(false)
      const info = await jsm.streams.info('RACED')
      expect(info.config.subjects).toEqual(['raced.>'])
      expect(info.config.duplicate_window).toBe(wanted.duplicate_window!)
    })

    it('keeps a max_bytes the operator set when it puts its own age and window back (README "Retention and the broker\'s disk")', async () => {
      const wanted = durableStream('BOUNDED', ['bounded.>'])
      await jsm.streams.add({ ...wanted, max_age: 3_600_000_000_000, max_bytes: 1_000_000 })
      expect(await ensureStream(jsm, wanted)).toBe(false)
      const { config } = await jsm.streams.info('BOUNDED')
      expect([config.max_age, config.max_bytes]).toEqual([wanted.max_age!, 1_000_000])
    })

    it('still fails when a stream of another name holds the subjects', async () => {
      const refused = await ensureStream(jsm, durableStream('THIRD', ['held.>'])).catch((error) => error)
      expect(isSubjectOverlap(refused)).toBe(true)
      expect(await jsm.streams.info('THIRD').catch((error) => error.code)).toBe('404')
    })

    it('opens a bucket that another process created while this one\'s creation was refused', async () => {
      let refusedOnce = false
      const js = nc.jetstream()
      const kvOf = async (...args: Parameters<typeof js.views.kv>) => {
        if (refusedOnce) return js.views.kv(...args)
        refusedOnce = true
        await js.views.kv(...args)
        throw overlap
      }
      // openBucket reaches the connection only through jetstream().views.kv.
      const racing = { jetstream: () => ({ views: { kv: kvOf } }) } as unknown as NatsConnection
      const kv = await openBucket(racing, 'raced_bucket', { history: 1 })
      await kv.put('k', new TextEncoder().encode('v'))
      expect((await kv.get('k'))!.string()).toBe('v')
      expect(refusedOnce).toBe(true)
    })

    it('creates a bucket from four connections at once, 1,000 times, without a refusal', async () => {
      const conns = await Promise.all(Array.from({ length: 4 }, () => connect({ servers: server.url })))
      try {
        let refused = 0
        for (let round = 0; round < 1_000; round++) {
          const opened = await Promise.allSettled(conns.map((c) => openBucket(c, `bucket_${round}`, { ttl: 5_000, history: 1 })))
          refused += opened.filter((o) => o.status === 'rejected').length
        }
        expect(refused).toBe(0)
      } finally {
        await Promise.all(conns.map((c) => c.close()))
      }
    }, 60_000)
  })
