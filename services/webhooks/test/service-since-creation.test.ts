import { Database } from 'bun:sqlite'
import { describe, expect, it } from 'bun:test'
import type { RecordEvent, ScanEvent } from '@lr/proto'
import { createSqliteWebhookStore } from '../src/adapters/webhook-store.sqlite'
import type { StoredEndpoint } from '../src/ports'
import { createWebhookService } from '../src/service'

// A worker behind on its intake (a backlog of RECORD_EVENTS or scan batches) reads the
// subscribers when it takes each event in, after an endpoint was created meanwhile.
const settings = { allowPrivate: false, retryBaseMs: 5000, retryMaxMs: 3_600_000, retryWindowMs: 86_400_000, timeoutMs: 10_000 }
/** The new endpoint's created_at (epoch seconds); the worker reads its backlog a minute later. */
const CREATED = 1_736_510_400
const NOW = (CREATED + 60) * 1000
const LIBRARY = 'acct:a1'
const endpoint = (id: string, createdAt: number): StoredEndpoint => ({
  id, library: LIBRARY, url: 'https://hooks.example/in', events: ['record.created', 'scan'], status: 'enabled', created_at: createdAt, disabled_at: null, secret: 'whsec_x', last_success_at: null,
})
const record = (name: string, ms: number): RecordEvent => ({ id: `evt_${name}`, type: 'record.created', library: LIBRARY, timestamp: new Date(ms).toISOString(), data: { name } })
const scan = (name: string, ms: number): ScanEvent => ({ scan_id: `scan_${name}`, code: 'Code0001', scanned_at: ms, user_agent: 'UA', visitor_id: 'a'.repeat(64), country: 'DE' })

/** An endpoint from long before and one created at CREATED; answers the event ids each was given. */
async function behind() {
  const store = createSqliteWebhookStore(new Database(':memory:'))
  await store.insertEndpoint(endpoint('wh_old', CREATED - 3_600))
  await store.insertEndpoint(endpoint('wh_new', CREATED))
  const service = createWebhookService({ store, settings, nowMs: () => NOW, libraryOfCode: async () => LIBRARY })
  const given = async (endpointId: string) => (await store.due(NOW + 1, 1000)).filter((m) => m.endpoint_id === endpointId).map((m) => m.event_id).sort()
  return { service, given }
}

describe('the webhooks intake, behind on its events', () => {
  it('sends a new endpoint no record event from before its creation, from the second before it on every one; an older endpoint gets all', async () => {
    const { service, given } = await behind()
    await service.ingestRecords([
      record('an-hour-before', (CREATED - 3_600) * 1000 + 1), record('just-too-early', (CREATED - 1) * 1000 - 1),
      record('the-second-before', (CREATED - 1) * 1000), record('the-same-second', CREATED * 1000 + 999), record('after', NOW - 1),
    ])
    expect(await given('wh_new')).toEqual(['evt_after', 'evt_the-same-second', 'evt_the-second-before'])
    expect(await given('wh_old')).toHaveLength(5)
  })

  it('sends a new endpoint no scan from before its creation', async () => {
    const { service, given } = await behind()
    await service.ingestScans([scan('before', (CREATED - 30) * 1000), scan('after', CREATED * 1000 + 1)])
    expect(await given('wh_new')).toEqual(['scan_after'])
    expect(await given('wh_old')).toEqual(['scan_after', 'scan_before'])
  })

  it('sends a record event whose time does not parse (it cannot be shown to be older)', async () => {
    const { service, given } = await behind()
    await service.ingestRecords([{ ...record('unparsed', 0), timestamp: 'not a time' }])
    expect(await given('wh_new')).toEqual(['evt_unparsed'])
  })
})
