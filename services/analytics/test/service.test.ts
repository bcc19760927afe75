import { describe, expect, it } from 'bun:test'
import { alice, bob, DAY, event, failure, T0, UA, visitor } from './fixtures'
import { setup } from './setup'
import { scansIngested } from '@lr/platform/metrics'

/** lr_scans_ingested_total by outcome (the process's registry: other tests add to it, so compare deltas). */
const ingestedCounts = async () => Object.fromEntries((await scansIngested.get()).values.map((v) => [v.labels.outcome, v.value])) as Record<string, number>

const badRequest = (message: string) => ({ code: 'bad_request' as const, message })
const notFound = (code: string) => ({ code: 'not_found' as const, message: `no dynamic QR code "${code}" in this library` })

/** One scan of each real client on Code0001: iPhone and iPad in DE, Android in US, Windows in FR, two bots. */
const CLIENTS = [
  event(1, { user_agent: UA.iphone, visitor_id: visitor(1), country: 'DE' }),
  event(2, { user_agent: UA.ipad, visitor_id: visitor(2), country: 'DE' }),
  event(3, { user_agent: UA.android, visitor_id: visitor(3), country: 'US', scanned_at: T0 + DAY }),
  event(4, { user_agent: UA.windows, visitor_id: visitor(4), country: 'FR', scanned_at: T0 + DAY }),
  event(5, { user_agent: UA.googlebot, visitor_id: visitor(5) }),
  event(6, { user_agent: UA.slack, visitor_id: visitor(6) }),
]

describe('ingest', () => {
  it('enriches each scan from its user agent and counts it once', async () => {
    const { service } = setup()
    expect(await service.ingest(CLIENTS)).toBe(4)
    expect(await service.breakdown(alice, 'Code0001', {})).toEqual({
      code: 'Code0001',
      total_scans: 4,
      unique_scans: 4,
      daily: [{ date: '2025-01-10', scans: 2, unique_scans: 2 }, { date: '2025-01-11', scans: 2, unique_scans: 2 }],
      countries: [{ country: 'DE', scans: 2 }, { country: 'FR', scans: 1 }, { country: 'US', scans: 1 }],
      devices: [{ device: 'mobile', scans: 2 }, { device: 'desktop', scans: 1 }, { device: 'tablet', scans: 1 }],
      os: [{ os: 'iOS', scans: 2 }, { os: 'Android', scans: 1 }, { os: 'Windows', scans: 1 }],
      browsers: [{ browser: 'Chrome', scans: 2 }, { browser: 'Mobile Safari', scans: 2 }],
      fallback_scans: 0,
    })
  })

  it('does not count Googlebot or the Slack link preview', async () => {
    const { service } = setup()
    expect(await service.ingest([CLIENTS[4], CLIENTS[5]])).toBe(0)
    expect((await service.summary(alice, {}, null)).analytics[0]).toEqual({ code: 'Code0001', total_scans: 0, unique_scans: 0 })
  })

  it('counts a redelivered scan once', async () => {
    const { service } = setup()
    await service.ingest(CLIENTS)
    expect(await service.ingest(CLIENTS)).toBe(0)
    expect((await service.summary(alice, {}, null)).analytics[0]).toEqual({ code: 'Code0001', total_scans: 4, unique_scans: 4 })
  })

  it('says in lr_scans_ingested_total what became of every event: counted, repeated, bot, malformed', async () => {
    const { service } = setup()
    const before = await ingestedCounts()
    await service.ingest(CLIENTS)
    await service.ingest([...CLIENTS.slice(0, 2), null, event(7, { user_agent: UA.android, visitor_id: visitor(7) })])
    const after = await ingestedCounts()
    const delta = Object.fromEntries(['counted', 'repeated', 'bot', 'malformed'].map((outcome) => [outcome, (after[outcome] ?? 0) - (before[outcome] ?? 0)]))
    expect(delta).toEqual({ counted: 5, repeated: 2, bot: 2, malformed: 1 })
  })

  it('drops malformed events and applies the rest of the batch', async () => {
    const { service } = setup()
    const bad = [null, 'text', { ...event(9), visitor_id: '10.0.0.1' }, { ...event(10), scan_id: undefined }]
    expect(await service.ingest([...bad, event(11)])).toBe(1)
  })

  // A time past 9999-12-31 has no YYYY-MM-DD day: it made no day the API could name, and past
  // Date's range (8.64e15 ms) it failed the whole batch, so every later scan waited behind it.
  it('drops scans dated after 9999-12-31 as malformed and applies the rest of the batch', async () => {
    const { service } = setup()
    const late = [event(1, { scanned_at: Date.UTC(10000, 0, 1) }), event(2, { scanned_at: 8.64e15 + 1 })]
    expect(await service.ingest([...late, event(3, { scanned_at: Date.UTC(9999, 11, 31, 23, 59, 59, 999) }), event(4)])).toBe(2)
    expect((await service.breakdown(alice, 'Code0001', {})).daily.map((d) => d.date)).toEqual(['2025-01-10', '9999-12-31'])
  })
})

describe('summary', () => {
  it('answers every live code of the library in its order, zeros included, without deleted ones', async () => {
    const { service } = setup()
    await service.ingest([event(1), event(2, { visitor_id: visitor(2) }), event(3, { code: 'Gone0001' }), event(4, { code: 'Bobs0001' })])
    expect(await service.summary(alice, {}, null)).toEqual({
      analytics: [
        { code: 'Code0001', total_scans: 2, unique_scans: 2 },
        { code: 'Code0002', total_scans: 0, unique_scans: 0 },
      ],
      next_cursor: null,
    })
  })

  it('answers only the codes of the key\'s own library', async () => {
    const { service } = setup()
    await service.ingest([event(1, { code: 'Bobs0001' })])
    expect(await service.summary(bob, {}, null)).toEqual({ analytics: [{ code: 'Bobs0001', total_scans: 1, unique_scans: 1 }], next_cursor: null })
  })

  it('counts only the days of from and to', async () => {
    const { service } = setup()
    await service.ingest(CLIENTS)
    expect((await service.summary(alice, { from: '2025-01-11', to: '2025-01-11' }, null)).analytics[0]).toEqual({ code: 'Code0001', total_scans: 2, unique_scans: 2 })
  })

  it('answers the library page by page, each page\'s codes over the range', async () => {
    const { service } = setup({ summaryPageSize: 1 })
    await service.ingest(CLIENTS.map((scan) => ({ ...scan, code: 'Code0002' })))
    const first = await service.summary(alice, { from: '2025-01-11' }, null)
    expect(first).toEqual({ analytics: [{ code: 'Code0001', total_scans: 0, unique_scans: 0 }], next_cursor: expect.any(String) })
    expect(await service.summary(alice, { from: '2025-01-11' }, first.next_cursor)).toEqual({
      analytics: [{ code: 'Code0002', total_scans: 2, unique_scans: 2 }], next_cursor: null,
    })
  })

  it('rejects a bad date with 400', async () => {
    const { service } = setup()
    expect(await failure(service.summary(alice, { from: '2025-13-01' }, null))).toEqual(badRequest('from must be a date YYYY-MM-DD (UTC)'))
  })
})

describe('breakdown', () => {
  it('answers the history of a soft-deleted code of the library', async () => {
    const { service } = setup()
    await service.ingest([event(1, { code: 'Gone0001' })])
    expect(await service.breakdown(alice, 'Gone0001', {})).toMatchObject({ code: 'Gone0001', total_scans: 1, unique_scans: 1 })
  })

  it('answers zeros for a code of the library without scans', async () => {
    const { service } = setup()
    expect(await service.breakdown(alice, 'Code0002', {})).toEqual({
      code: 'Code0002', total_scans: 0, unique_scans: 0, daily: [], countries: [], devices: [], os: [], browsers: [], fallback_scans: 0,
    })
  })

  it('answers 404 for a code of another library', async () => {
    const { service } = setup()
    await service.ingest([event(1, { code: 'Bobs0001' })])
    expect(await failure(service.breakdown(alice, 'Bobs0001', {}))).toEqual(notFound('Bobs0001'))
  })

  it('answers 404 without asking the directory for a code that could never have been issued', async () => {
    const { service, directory } = setup()
    expect(await failure(service.breakdown(alice, 'a.b', {}))).toEqual(notFound('a.b'))
    expect(directory.asked).toBe(0)
  })

  it('checks the query before the code, so a bad date on an unknown code is 400', async () => {
    const { service } = setup()
    expect(await failure(service.breakdown(alice, 'Nope0001', { to: 'yesterday' }))).toEqual(badRequest('to must be a date YYYY-MM-DD (UTC)'))
  })

  it('rejects from after to with 400', async () => {
    const { service } = setup()
    expect(await failure(service.breakdown(alice, 'Code0001', { from: '2025-01-12', to: '2025-01-10' }))).toEqual(badRequest('from must not be after to'))
  })
})
