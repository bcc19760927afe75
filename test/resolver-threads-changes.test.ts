import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '@lr/proto'
import { createLogger, installLogger } from '@lr/platform/log'
import { serveShortLinks, type ShortLinks } from '@lr/dynamic'
import { startStandalone } from '@lr/standalone'
import { adminOf } from './harness/stack'

/**
 * The contract: "A PATCHed destination is used by the very next scan", and a deleted code stops
 * resolving. In one process with resolver threads (RESOLVER_THREADS, the default on more than one
 * CPU) a change reached the threads after the write was answered: a scan sent at once could
 * land on a thread that still held the old destination (7 stale redirects of 40 when found).
 */
describe('resolver threads and writes in one process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'lr-threads-changes-'))
  const env = { ...(Bun.env as Record<string, string>), TRANSPORT: 'memory', DATA_DIR: dataDir, SHORT_PORT: '0', RESOLVER_THREADS: '2', SHORT_BASE_URL: 'http://short.test', LIMIT_PERSONAL_PER_SECOND: '100000', LIMIT_PERSONAL_BURST: '100000', LIMIT_PERSONAL_DAILY: '1000000' }
  installLogger(createLogger('standalone', 'warn'))
  let product: Awaited<ReturnType<typeof startStandalone>>
  let short: ShortLinks
  let key: string
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await product.gateway.handle(new Request(`http://localhost${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }))
    return { status: res.status, body: (await res.json()) as any }
  }
  /** A scan over a new connection each time, so the kernel spreads them over the threads. */
  const scan = (code: string) => fetch(`http://127.0.0.1:${short.port}/${code}`, { redirect: 'manual', headers: { connection: 'close' } })

  beforeAll(async () => {
    const config = loadConfig(env)
    product = await startStandalone(config)
    short = await serveShortLinks({ config, bus: product.bus, scans: product.scans, resolver: () => product.resolver })
    expect(short.threads).toBe(2)
    const { admin } = adminOf(env)
    const { account_id } = await admin('account', 'create', '--email', 'threads@example.com', '--tier', 'pro')
    key = (await admin('key', 'create', '--account', account_id, '--scope', 'personal')).key
  }, 30_000)
  afterAll(async () => {
    await short?.stop()
    await product?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('answers a PATCH only once every thread has the new destination: the very next scan follows it', async () => {
    const [{ code }] = (await api('POST', '/v1/dynqrcodes', { destination_url: 'https://example.com/v0', name: 'Poster' })).body.created
    for (let i = 0; i < 4; i++) expect((await scan(code)).status).toBe(302) // both threads hold the code
    const stale: string[] = []
    for (let i = 1; i <= 40; i++) {
      expect((await api('PATCH', `/v1/dynqrcodes/${code}`, { destination_url: `https://example.com/v${i}` })).status).toBe(200)
      const location = (await scan(code)).headers.get('location')
      if (location !== `https://example.com/v${i}`) stale.push(`${i}: ${location}`)
    }
    expect(stale).toEqual([])
  }, 60_000)

  it('answers a DELETE only once every thread has forgotten the code: the very next scan is 410', async () => {
    const stillRedirected: string[] = []
    for (let i = 0; i < 15; i++) {
      const [{ code }] = (await api('POST', '/v1/dynqrcodes', { destination_url: 'https://example.com/gone', name: `Gone ${i}` })).body.created
      for (let n = 0; n < 4; n++) await scan(code)
      expect((await api('DELETE', `/v1/dynqrcodes/${code}`)).status).toBe(200)
      const status = (await scan(code)).status
      if (status !== 410) stillRedirected.push(`${code}: ${status}`)
    }
    expect(stillRedirected).toEqual([])
  }, 60_000)
})
