import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { connect, headers, type NatsConnection } from 'nats'
import { AppError } from '@lr/proto'
import { DEADLINE_HEADER, DEADLINE_SKEW_MS, expiredRequestLog } from '@lr/platform/bus-deadline'
import { createNatsBus, type NatsBus } from '@lr/platform/bus-nats'
import { metricsText } from '@lr/platform/metrics'
import { sample } from '../../test/harness/metrics'
import { startNats, type NatsServer } from '../../test/harness/nats'
import { skipReason } from '../../test/harness/servers'
import { captureLog } from './log-capture'

/** A request whose caller has given up is not run by the serving bus: it would only delay the live ones. */
const skip = skipReason('nats-server')
const expiredCount = async (subject: string) => sample(await metricsText(), `lr_bus_requests_expired_total{subject="${subject}"}`) ?? 0
const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))
const parsed = (data: Uint8Array) => JSON.parse(new TextDecoder().decode(data))
const EXPIRED_LINE = 'bus requests past their deadline were not handled'

if (skip) describe.skip(`NATS bus deadlines (${skip})`, () => {})
else
  describe('NATS bus deadlines', () => {
    let nats: NatsServer
    let server: NatsBus
    let client: NatsBus
    /** A peer without deadlines: requests as nats.js makes them, headers only when a test sets them. */
    let raw: NatsConnection
    /** What each subject's handler ran, by the payload's `n`. */
    const ran: Record<string, number[]> = {}
    const serveRecording = (subject: string) =>
      server.serve(subject, async (payload) => {
        const { n, blockMs } = payload as { n: number; blockMs?: number }
        ;(ran[subject] ??= []).push(n)
        // Holds the event loop, as an overloaded service does: nothing else in this process runs meanwhile.
        if (blockMs) Bun.sleepSync(blockMs)
        return n
      }, { queue: subject })

    beforeAll(async () => {
      nats = await startNats()
      ;[server, client, raw] = await Promise.all([createNatsBus(nats.url, 'server'), createNatsBus(nats.url, 'client'), connect({ servers: nats.url })])
      for (const subject of ['busy.v1.get', 'fresh.v1.get', 'old-peer.v1.get', 'late.v1.get', 'skewed.v1.get']) serveRecording(subject)
      await server.connection.flush() // the server knows every subscription
    })
    afterAll(async () => {
      await raw?.close()
      await client?.close()
      await server?.close()
      await nats?.stop()
    })

    it('does not run a request whose caller timed out while the service was busy, and counts it', async () => {
      const subject = 'busy.v1.get'
      const { lines, restore } = captureLog()
      try {
        const first = client.request(subject, { n: 1, blockMs: 1_200 }, { timeoutMs: 5_000 })
        // Reaches the service while the first handler holds it, and times out meanwhile.
        const second = client.request(subject, { n: 2 }, { timeoutMs: 200 }).catch((error: unknown) => error)
        expect(await first).toBe(1)
        expect(((await second) as AppError).code).toBe('timeout')
        await Bun.sleep(50) // anything the service would still start
        expect(ran[subject]).toEqual([1])
        expect(await expiredCount(subject)).toBe(1)
        expect(lines.filter((line) => line.msg === EXPIRED_LINE).map((line) => [line.subject, line.expired])).toEqual([[subject, 1]])
      } finally {
        restore()
      }
    })

    it('runs a request within its deadline as before', async () => {
      const subject = 'fresh.v1.get'
      expect(await client.request(subject, { n: 3 }, { timeoutMs: 2_000 })).toBe(3)
      expect(ran[subject]).toEqual([3])
      expect(await expiredCount(subject)).toBe(0)
    })

    it('runs a request without a deadline header (a peer from before deadlines)', async () => {
      const subject = 'old-peer.v1.get'
      const reply = await raw.request(subject, json({ n: 4 }), { timeout: 2_000 })
      expect(parsed(reply.data)).toEqual({ ok: true, data: 4 })
      expect(ran[subject]).toEqual([4])
    })

    it('runs a request past its deadline by less than the allowance for clock skew', async () => {
      const subject = 'skewed.v1.get'
      const h = headers()
      h.set(DEADLINE_HEADER, String(Date.now() - DEADLINE_SKEW_MS / 2))
      const reply = await raw.request(subject, json({ n: 5 }), { timeout: 2_000, headers: h })
      expect(parsed(reply.data)).toEqual({ ok: true, data: 5 })
      expect(ran[subject]).toEqual([5])
    })

    it('answers a caller that still waits past its deadline 504 without running it, and logs one warn line for the subject', async () => {
      const subject = 'late.v1.get'
      const { lines, restore } = captureLog()
      try {
        const replies = await Promise.all(
          [6, 7, 8].map((n) => {
            const h = headers()
            h.set(DEADLINE_HEADER, String(Date.now() - 5_000))
            return raw.request(subject, json({ n }), { timeout: 2_000, headers: h })
          }),
        )
        for (const reply of replies) expect(parsed(reply.data)).toMatchObject({ ok: false, error: { code: 'timeout' } })
        expect(ran[subject]).toBeUndefined()
        expect(await expiredCount(subject)).toBe(3)
        const warned = lines.filter((line) => line.msg === EXPIRED_LINE)
        expect(warned.map((line) => [line.subject, line.expired])).toEqual([[subject, 1]])
        expect(warned[0]!.late_ms).toBeGreaterThanOrEqual(5_000)
      } finally {
        restore()
      }
    })
  })

describe('the log of expired requests', () => {
  it('writes one line per subject per interval, with how many were shed since the last one', async () => {
    const { lines, restore } = captureLog()
    try {
      const shed = expiredRequestLog(50)
      for (const late of [300, 900, 400]) shed('a.v1.get', late)
      shed('b.v1.get', 300)
      await Bun.sleep(60)
      shed('a.v1.get', 300)
      expect(lines.map((line) => [line.subject, line.expired, line.late_ms])).toEqual([['a.v1.get', 1, 300], ['b.v1.get', 1, 300], ['a.v1.get', 3, 900]])
    } finally {
      restore()
    }
  })
})
