import { beforeAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { DiscardPolicy, type JetStreamManager, type NatsConnection } from 'nats'
import { loadConfig } from '@lr/proto'
import { waitUntil } from '../../test/harness/ports'
import { skipReason } from '../../test/harness/servers'
import { sample } from '../../test/harness/metrics'
import { metricsResponse } from '@lr/platform/metrics'
import { streamsRefusing } from '@lr/platform/jetstream-refusals'
import { createJetStreamScanPublisher } from '@lr/platform/scan-stream-publisher'
import { startScanRelayInWorker } from '@lr/platform/scan-relay-in-worker'
import { SCAN_BATCH_STREAM, SCAN_STREAM } from '@lr/platform/scan-stream-config'
import { ids, range, useScanStreams } from './scan-streams.fixture'
import { startNats } from '../../test/harness/nats'

const skip = skipReason('nats-server')
if (skip) describe.skip(`scan relay in a Worker (${skip})`, () => {})
else
  describe('scan relay in a Worker (real nats-server -js)', () => {
    const streams = useScanStreams()
    let nc: NatsConnection
    let jsm: JetStreamManager
    beforeAll(() => void ({ nc, jsm } = streams))
    const relayedIds = async () => {
      const { first_seq, last_seq, messages } = (await jsm.streams.info(SCAN_STREAM)).state
      const out: string[] = []
      for (let seq = first_seq; messages > 0 && seq <= last_seq; seq++) out.push((await jsm.streams.getMessage(SCAN_STREAM, { seq })).header.get('Nats-Msg-Id'))
      return out.sort()
    }

    /** What a relay that should keep working told the process (nothing, when all is well). */
    const failures: string[] = []
    const fail = (_fields: Record<string, unknown>, message: string) => void failures.push(message)

    it('relays every batch to SCANS from its own thread, reports its lag to this thread\'s metrics, and stops', async () => {
      const relay = await startScanRelayInWorker(loadConfig({ TRANSPORT: 'nats', NATS_URL: streams.server.url, LOG_LEVEL: 'warn' }), fail)
      const publisher = createJetStreamScanPublisher(nc)
      for (const e of range(1, 300)) publisher.publish(e)
      await publisher.flush()
      await waitUntil(async () => (await jsm.streams.info(SCAN_STREAM)).state.messages === 300, 10_000, 'every scan in SCANS')
      // The worker's first lag reading comes at start; the gauge lives on this thread.
      const series = `lr_jetstream_consumer_pending{stream="${SCAN_BATCH_STREAM}",consumer="scans-relay"}`
      await waitUntil(async () => sample(await (await metricsResponse()).text(), series) !== undefined, 5_000, 'the relay lag on this thread')
      // Its heap comes with its lag: the Worker is a VM of its own, which this thread's heap leaves out.
      const heap = async () => sample(await (await metricsResponse()).text(), 'lr_thread_heap_used_bytes{thread="scan-relay"}')
      expect(await heap()).toBeGreaterThan(1_000_000)
      await relay.stop()
      expect(await heap()).toBeUndefined()
      expect(await relayedIds()).toEqual(ids(range(1, 300)).sort())
      const info = await jsm.consumers.info(SCAN_BATCH_STREAM, 'scans-relay')
      expect([info.num_pending, info.num_ack_pending]).toEqual([0, 0])
      expect(failures).toEqual([])
      publisher.close()
    })

    // A full SCANS store refuses every round: the Worker's refusals are counted, logged and on
    // /readyz in this thread, whose metrics and probes the process serves (jetstream-refusals.ts).
    it('hands the rounds SCANS refuses for want of room to this thread\'s metrics and readiness, and their end', async () => {
      const { config } = await jsm.streams.info(SCAN_STREAM)
      await jsm.streams.update(SCAN_STREAM, { ...config, max_bytes: 1, discard: DiscardPolicy.New })
      const relay = await startScanRelayInWorker(loadConfig({ TRANSPORT: 'nats', NATS_URL: streams.server.url, LOG_LEVEL: 'warn' }), fail)
      const publisher = createJetStreamScanPublisher(nc)
      const full = async () => sample(await (await metricsResponse()).text(), `lr_jetstream_store_full{stream="${SCAN_STREAM}"}`)
      try {
        for (const e of range(1, 20)) publisher.publish(e)
        await publisher.flush()
        await waitUntil(async () => (await full()) === 1, 10_000, 'the refusal on this thread')
        expect(sample(await (await metricsResponse()).text(), `lr_jetstream_refusals_total{stream="${SCAN_STREAM}",reason="max_bytes"}`)).toBeGreaterThan(0)
        expect(streamsRefusing()).toBe(1)
        await jsm.streams.update(SCAN_STREAM, { ...config, max_bytes: -1 })
        await waitUntil(async () => (await jsm.streams.info(SCAN_STREAM)).state.messages === 20, 10_000, 'every scan in SCANS')
        await waitUntil(async () => (await full()) === 0, 5_000, 'the refusal over')
        expect([streamsRefusing(), failures]).toEqual([0, []])
      } finally {
        await relay.stop()
        publisher.close()
      }
    })

    it('gives way in its thread when told ingestion is behind', async () => {
      const relay = await startScanRelayInWorker(loadConfig({ TRANSPORT: 'nats', NATS_URL: streams.server.url, LOG_LEVEL: 'warn' }), fail)
      relay.giveWay(true)
      await Bun.sleep(100) // the message is in the worker before the scans are
      const publisher = createJetStreamScanPublisher(nc)
      for (const e of range(1, 50)) publisher.publish(e)
      await publisher.flush()
      await Bun.sleep(500) // within the worker's 1 s pause
      expect((await jsm.streams.info(SCAN_STREAM)).state.messages).toBe(0)
      relay.giveWay(false)
      await waitUntil(async () => (await jsm.streams.info(SCAN_STREAM)).state.messages === 50, 5_000, 'every scan in SCANS')
      await relay.stop()
      expect(failures).toEqual([])
      publisher.close()
    })

    /** What /proc says of a thread of this process; undefined once it ended (between listing and reading: a CI run met one). */
    const taskFile = (tid: string, file: string) => {
      try {
        return readFileSync(`/proc/self/task/${tid}/${file}`, 'utf8')
      } catch {
        return undefined
      }
    }
    /** The nice value of each thread of this process, by thread id (Linux keeps one per thread). */
    const nices = () =>
      new Map(readdirSync('/proc/self/task').flatMap((tid) => {
        const stat = taskFile(tid, 'stat')
        return stat === undefined ? [] : [[tid, Number(stat.split(') ')[1]!.split(' ')[16])] as const]
      }))
    const threadName = (tid: string) => taskFile(tid, 'comm')?.trim()

    it('runs its thread SCAN_RELAY_NICE below the process\'s CPU priority, every thread there before untouched, and still relays every scan', async () => {
      const before = nices()
      const expected = Math.min(19, before.get(String(process.pid))! + 7)
      const relay = await startScanRelayInWorker(loadConfig({ TRANSPORT: 'nats', NATS_URL: streams.server.url, LOG_LEVEL: 'warn', SCAN_RELAY_NICE: '7' }), fail)
      const during = nices()
      const lowered = [...during].filter(([, nice]) => nice === expected).map(([tid]) => tid)
      // The Worker's thread, and the helpers of its heap that it started after lowering itself.
      expect(lowered.map(threadName)).toContain('Worker')
      expect(lowered.filter((tid) => before.has(tid))).toEqual([])
      expect([...before].filter(([tid, nice]) => during.has(tid) && during.get(tid) !== nice)).toEqual([])
      const publisher = createJetStreamScanPublisher(nc)
      for (const e of range(1, 40)) publisher.publish(e)
      await publisher.flush()
      await waitUntil(async () => (await jsm.streams.info(SCAN_STREAM)).state.messages === 40, 10_000, 'every scan in SCANS')
      await relay.stop()
      publisher.close()
      await waitUntil(() => ![...nices().values()].includes(expected), 5_000, 'the lowered threads to end with their Worker')

      // 0: the relay's threads keep the process's priority.
      const plain = await startScanRelayInWorker(loadConfig({ TRANSPORT: 'nats', NATS_URL: streams.server.url, LOG_LEVEL: 'warn', SCAN_RELAY_NICE: '0' }), fail)
      const started = nices()
      expect([...started].filter(([tid, nice]) => !before.has(tid) && nice !== before.get(String(process.pid)))).toEqual([])
      await plain.stop()
      expect(failures).toEqual([])
    })

    it('tells the process once its connection closes for good, and not when it is stopped', async () => {
      const server = await startNats({ jetstream: true, auth: { user: 'relay', password: 'first' } })
      try {
        const told: { fields: Record<string, unknown>; message: string }[] = []
        const configWith = (url: string) => loadConfig({ TRANSPORT: 'nats', NATS_URL: url, LOG_LEVEL: 'warn' })
        const relay = await startScanRelayInWorker(configWith(server.url), (fields, message) => told.push({ fields, message }))
        // The server takes another password: the client is refused twice and gives up.
        await server.down()
        server.setPassword('second')
        await server.up()
        await waitUntil(() => told.length > 0, 10_000, 'the relay to tell of its closed connection')
        expect(told).toEqual([{ fields: { connection: 'analytics-relay', error: 'Authorization Violation' }, message: 'the analytics-relay NATS connection closed for good (Authorization Violation): stopping' }])
        await relay.stop()
        const again = await startScanRelayInWorker(configWith(server.url.replace(':first@', ':second@')), (fields, message) => told.push({ fields, message }))
        await again.stop()
        await Bun.sleep(100)
        expect(told.length).toBe(1)
      } finally {
        await server.stop()
      }
    })

    it('rejects with the reason when the relay cannot start', async () => {
      const config = loadConfig({ TRANSPORT: 'nats', NATS_URL: 'nats://127.0.0.1:1', LOG_LEVEL: 'warn' })
      await expect(startScanRelayInWorker(config, fail)).rejects.toThrow(/the scan relay did not start: .+/)
    })
  })
