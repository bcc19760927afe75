import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { connect } from 'nats'
import { LEASE_BUCKET } from '@lr/platform/ingest-lease'
import { call } from './harness/client'
import { freshMember, type Member } from './harness/fixtures'
import { mongoForTests } from './harness/mongo'
import { waitUntil } from './harness/ports'
import { startScaleOutStack, type ScaleOutStack } from './harness/scale-out'
import { BROWSER, pathOf } from './api/short-links.suite'

// kill -9 in the production shape (two replicas of everything on NATS, MongoDB, Redis): a
// replica that dies takes only its in-flight requests with it, as JSON 503/504, never a 500;
// nothing answered 201 is lost; a retry with the same Idempotency-Key never creates twice; and
// every 302 of the resolvers is counted exactly once although an analytics replica died.
const SERVICES = ['auth', 'records', 'dynamic', 'analytics'] as const

interface Sent {
  path: string
  body: unknown
  idem: string
  status: number
  answer: any
}

/** A scale-out deployment for one describe block, a member with a key, and its POST with an Idempotency-Key. */
function deployment(mongo: string) {
  const d = { stack: undefined as unknown as ScaleOutStack, member: undefined as unknown as Member }
  beforeAll(async () => {
    d.stack = await startScaleOutStack(mongo)
    d.member = await freshMember(d.stack)
  }, 120_000)
  afterAll(() => d.stack?.stop(), 60_000)
  return {
    get stack() { return d.stack },
    get member() { return d.member },
    post: (path: string, body: unknown, idem: string) => call(d.stack, 'POST', path, { key: d.member.key, body, headers: { 'idempotency-key': idem } }),
  }
}

type Deployment = ReturnType<typeof deployment>

/**
 * A code scanned by two clients through alternating resolvers, at a rate FerretDB's SQLite
 * backend can apply (README "MongoDB compatibility"), until `stop`.
 */
async function scanFlood(d: Deployment, name: string) {
  const code = (await d.post('/v1/dynqrcodes', { destination_url: `https://example.com/${name}`, name }, `${name}-${Date.now()}`)).body.created[0]
  const path = pathOf(code)
  let redirects = 0
  let other = 0
  let stopping = false
  const scanner = async () => {
    while (!stopping) {
      const res = await d.stack.short(path, { headers: { 'user-agent': BROWSER } })
      await res.arrayBuffer()
      if (res.status === 302) redirects++
      else other++
      await Bun.sleep(40)
    }
  }
  const flood = Promise.all(Array.from({ length: 2 }, scanner))
  return {
    /** Stops scanning: the 302s, and the other answers. */
    async stop() {
      stopping = true
      await flood
      return { redirects, other }
    },
    /** Waits until analytics counts `redirects` scans of the code, then checks that no more come. */
    async expectCounted(redirects: number) {
      let last: unknown
      const total = async () => {
        const res = await call(d.stack, 'GET', `/v1/dynqrcodes/${code.code}/analytics`, { key: d.member.key })
        last = res.body
        return res.body.total_scans
      }
      await waitUntil(async () => (await total()) >= redirects, 90_000, `${redirects} scans counted`).catch((error) => {
        throw new Error(`${error.message}; last answer ${JSON.stringify(last)}\n${d.stack.output!().split('\n').filter((l) => l.startsWith('[analytics') && !l.includes('"msg":"request"')).slice(-30).join('\n')}`)
      })
      await Bun.sleep(2000)
      expect(await total()).toBe(redirects)
    },
  }
}

/** The analytics replica holding the ingest lease (platform/src/ingest-lease.ts), and the bucket to watch it in. */
async function leaseHolder(stack: ScaleOutStack) {
  const nc = await connect({ servers: stack.env.NATS_URL })
  const kv = await nc.jetstream().views.kv(LEASE_BUCKET)
  const pid = Number((await kv.get('holder'))!.string().split('-')[0])
  const holder = stack.replicas('analytics').find((r) => r.proc.pid === pid)!
  expect(holder).toBeDefined()
  return { holder, kv, close: () => nc.close() }
}

const server = await mongoForTests()
if ('skip' in server) describe.skip(`scale-out faults (${server.skip})`, () => {})
else {
  const mongo = server.url
  afterAll(() => server.stop())
  describe('scale-out faults: kill -9 of one replica of each service', () => {
    const d = deployment(mongo)
    const post = d.post

    it('loses no 201 and creates nothing twice while a replica of each service is killed', async () => {
      const sent: Sent[] = []
      let stopping = false
      const worker = async (w: number) => {
        for (let n = 0; !stopping; n++) {
          const dynamic = n % 2 === 1
          const path = dynamic ? '/v1/dynqrcodes' : '/v1/qrcodes'
          const body = dynamic ? { destination_url: `https://example.com/d/${w}/${n}`, name: `D${w}-${n}` } : { url: `https://example.com/s/${w}/${n}`, name: `S${w}-${n}` }
          const idem = `kill-${w}-${n}`
          const res = await post(path, body, idem)
          sent.push({ path, body, idem, status: res.status, answer: res.body })
        }
      }
      const WORKERS = 6
      const stream = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)))
      await Bun.sleep(1500)
      for (const name of SERVICES) {
        await d.stack.kill(name, 0)
        await Bun.sleep(1500)
      }
      for (const name of SERVICES) await d.stack.revive(name, 0)
      await Bun.sleep(1000)
      stopping = true
      await stream

      const created = sent.filter((s) => s.status === 201)
      const failed = sent.filter((s) => s.status !== 201)
      expect(created.length).toBeGreaterThan(50)
      // Only in-flight requests may fail: at most one per worker per killed replica, as JSON 503/504.
      expect(failed.length).toBeLessThanOrEqual(WORKERS * SERVICES.length)
      for (const f of failed) {
        expect([503, 504]).toContain(f.status)
        expect(f.answer).toEqual({ error: expect.any(String) })
      }

      // Every 201 is stored as answered.
      for (const c of created) {
        const record = c.answer.created?.[0] ?? c.answer
        const path = c.path === '/v1/qrcodes' ? `/v1/qrcodes/${record.qr_id}` : `/v1/dynqrcodes/${record.code}`
        const got = await call(d.stack, 'GET', path, { key: d.member.key })
        expect(got.status).toBe(200)
        expect(got.body).toMatchObject(c.path === '/v1/qrcodes' ? { qr_id: record.qr_id, url: record.url } : { code: record.code, destination_url: record.destination_url })
      }

      // Retrying every request with its key: failures now succeed, and nothing exists twice.
      for (const s of sent) {
        const again = await post(s.path, s.body, s.idem)
        expect(again.status).toBe(201)
        if (s.status === 201) expect(again.body).toEqual(s.answer)
      }
      const names = async (path: string, field: 'qrcodes' | 'dynqrcodes') => {
        const all: string[] = []
        let cursor = ''
        do {
          const page = await call(d.stack, 'GET', `${path}?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { key: d.member.key })
          expect(page.status).toBe(200)
          all.push(...page.body[field].map((r: { name: string }) => r.name))
          cursor = page.body.next_cursor ?? ''
        } while (cursor)
        return all
      }
      // A block a killed writer left open holds lists back for OPEN_BLOCK_LEASE_MS (5 s) at most.
      let stored: string[] = []
      await waitUntil(async () => {
        stored = [...(await names('/v1/qrcodes', 'qrcodes')), ...(await names('/v1/dynqrcodes', 'dynqrcodes'))]
        return stored.length >= sent.length
      }, 10_000, 'every record in the lists').catch(() => undefined)
      expect(stored.length).toBe(sent.length)
      expect(new Set(stored).size).toBe(sent.length)
    }, 240_000)

  })

  // Its own deployment: the creates above leave revived replicas behind, and on FerretDB a second
  // take-over right after them has stalled the store (README "MongoDB compatibility").
  describe('scale-out faults: kill -9 of the analytics replica applying scans', () => {
    const d = deployment(mongo)

    it('counts every 302 exactly once when the analytics replica applying scans is killed during a scan flood', async () => {
      const flood = await scanFlood(d, 'flood')
      await Bun.sleep(1500)
      // The replica that holds the ingest lease is the one to kill.
      const lease = await leaseHolder(d.stack)
      await lease.close()
      await d.stack.kill('analytics', lease.holder.index)
      await Bun.sleep(4000)
      const { redirects, other } = await flood.stop()
      expect(redirects).toBeGreaterThan(150)
      expect(other).toBe(0)
      // What the killed replica held comes back to the other after the consumer's ack wait.
      await flood.expectCounted(redirects)
    }, 180_000)
  })

  // A holder that is only paused (SIGSTOP; a frozen VM or container) past its lease wakes with
  // scans the consumer has since handed to the new holder, maybe in the middle of a batch: it had
  // gone on applying them (a probe: 527 scans counted of 449 redirects).
  describe('scale-out faults: the analytics replica applying scans paused past its lease', () => {
    const d = deployment(mongo)

    it('counts every 302 exactly once when the replica applying scans is paused (SIGSTOP) for 6 s, then goes on', async () => {
      const flood = await scanFlood(d, 'pause')
      await Bun.sleep(2000)
      const lease = await leaseHolder(d.stack)
      const pid = lease.holder.proc.pid
      process.kill(pid, 'SIGSTOP')
      try {
        // Past the lease (2.5 s) and the consumer's ack wait (3 s): the other replica takes both over.
        await waitUntil(async () => !(await lease.kv.get('holder'))?.string().startsWith(`${pid}-`), 10_000, 'the paused holder\'s lease to lapse')
        await Bun.sleep(3000)
      } finally {
        process.kill(pid, 'SIGCONT')
        await lease.close()
      }
      await Bun.sleep(4000)
      const { redirects, other } = await flood.stop()
      expect(redirects).toBeGreaterThan(150)
      expect(other).toBe(0)
      // What the woken replica still held would land after the others: none may.
      await flood.expectCounted(redirects)
    }, 180_000)
  })
}
