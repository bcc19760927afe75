import { Database } from 'bun:sqlite'
import { describe, expect, it } from 'bun:test'
import type { ScanEvent } from '@lr/proto'
import { createSqliteWebhookStore } from '../src/adapters/webhook-store.sqlite'
import type { StoredEndpoint } from '../src/ports'
import { createWebhookService } from '../src/service'

const settings = { allowPrivate: false, retryBaseMs: 5000, retryMaxMs: 3_600_000, retryWindowMs: 86_400_000, timeoutMs: 10_000 }
const NOW = 1_736_510_400_000
const scan = (n: number, code: string): ScanEvent => ({ scan_id: `scan-${n}`, code, scanned_at: NOW + n, user_agent: 'UA', visitor_id: 'a'.repeat(64), country: 'DE' })
const endpoint = (id: string, library: string): StoredEndpoint => ({
  id, library, url: 'https://hooks.example/scans', events: ['scan'], status: 'enabled', created_at: 0, disabled_at: null, secret: 'whsec_x', last_success_at: null,
})

/** A worker whose library `lib_hooked` has a scan endpoint and `lib_quiet` none; codes name their library. */
async function worker() {
  const sqlite = createSqliteWebhookStore(new Database(':memory:'))
  const enqueued: number[] = []
  // The store as it is, with each enqueue call's size noted.
  const store = { ...sqlite, enqueue: (messages: Parameters<typeof sqlite.enqueue>[0]) => (enqueued.push(messages.length), sqlite.enqueue(messages)) }
  await store.insertEndpoint(endpoint('wh_1', 'lib_hooked'))
  const asked: string[] = []
  const libraries: Record<string, string> = { Hooked01: 'lib_hooked', Quiet001: 'lib_quiet', Quiet002: 'lib_quiet' }
  const service = createWebhookService({
    store, settings, nowMs: () => NOW,
    libraryOfCode: async (code) => {
      asked.push(code)
      return libraries[code] ?? null
    },
  })
  const queued = async () => (await store.due(NOW + 1, 1000)).map((m) => m.event_id).sort()
  return { service, asked, queued, enqueued }
}

describe('the webhooks worker\'s scan intake', () => {
  it('wants a batch only when a code of it has a library with a scan endpoint', async () => {
    const { service } = await worker()
    expect(await service.wantsScans(['Quiet001', 'Quiet002'])).toBe(false)
    expect(await service.wantsScans(['Unknown1'])).toBe(false)
    expect(await service.wantsScans(['Quiet001', 'Hooked01'])).toBe(true)
  })

  it('stores a delivery for each scan of a wanted code only, drops what is no scan event, and asks each code\'s library once', async () => {
    const { service, asked, queued } = await worker()
    await service.ingestScans([scan(1, 'Quiet001'), scan(2, 'Hooked01'), scan(3, 'Quiet001'), { scan_id: 'no code' }, { code: 'Hooked01' }, null, scan(4, 'Hooked01')])
    expect(await queued()).toEqual(['scan-2', 'scan-4'])
    expect(asked.sort()).toEqual(['Hooked01', 'Quiet001'])
  })

  it('drops a scan dated after 9999-12-31 (Date cannot name it) and stores the rest of the batch', async () => {
    const { service, queued } = await worker()
    await service.ingestScans([{ ...scan(1, 'Hooked01'), scanned_at: 8.64e15 + 1 }, scan(2, 'Hooked01')])
    expect(await queued()).toEqual(['scan-2'])
  })

  it('stores the deliveries of a whole batch of scans in one enqueue (one transaction), and a batch no endpoint wants in none', async () => {
    const { service, queued, enqueued } = await worker()
    const scans = Array.from({ length: 500 }, (_, i) => scan(i + 1, i % 2 ? 'Hooked01' : 'Quiet001'))
    await service.ingestScans(scans)
    await service.ingestScans([scan(1001, 'Quiet001'), scan(1002, 'Quiet002')])
    expect(enqueued).toEqual([250])
    expect(await queued()).toHaveLength(250)
  })
})
