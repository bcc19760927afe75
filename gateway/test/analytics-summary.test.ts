import { describe, expect, it } from 'bun:test'
import { ANALYTICS_SUBJECTS as S, AppError, type CodeSummary, JSON_CONTENT_TYPE } from '@lr/proto'
import { createGateway } from '../src/app'
import { GOOD_KEY, scriptedBus } from './fake-bus'

const row = (code: string, scans: number): CodeSummary => ({ code, total_scans: scans, unique_scans: scans })

/** An analytics service answering the summary in the pages `pages` names by cursor (null: the first). */
function pagedSummary(pages: Record<string, { analytics: CodeSummary[]; next_cursor: string | null } | AppError>) {
  return scriptedBus({
    [S.summary]: ({ cursor }) => {
      const page = pages[cursor ?? 'first']!
      if (page instanceof AppError) throw page
      return page
    },
  })
}

const get = (bus: ReturnType<typeof scriptedBus>['bus'], query = '') =>
  createGateway({ bus }).handle(new Request(`http://localhost/v1/dynqrcodes/analytics${query}`, { headers: { 'x-api-key': GOOD_KEY } }))

describe('GET /v1/dynqrcodes/analytics over summary pages', () => {
  it('joins every page into one answer, in order, asking each with the query and the cursor before it', async () => {
    const { bus, requests } = pagedSummary({
      first: { analytics: [row('Code0001', 3)], next_cursor: 'p2' },
      p2: { analytics: [], next_cursor: 'p3' },
      p3: { analytics: [row('Code0002', 0), row('Code0003', 1)], next_cursor: null },
    })
    const res = await get(bus, '?from=2025-01-01')
    expect([res.status, res.headers.get('content-type')]).toEqual([200, JSON_CONTENT_TYPE])
    expect(await res.json()).toEqual({ analytics: [row('Code0001', 3), row('Code0002', 0), row('Code0003', 1)] })
    const asked = requests.filter((r) => r.subject === S.summary).map((r) => [r.payload.query, r.payload.cursor])
    expect(asked).toEqual([[{ from: '2025-01-01' }, null], [{ from: '2025-01-01' }, 'p2'], [{ from: '2025-01-01' }, 'p3']])
  })

  it('answers a library of one page as it is', async () => {
    const { bus } = pagedSummary({ first: { analytics: [row('Code0001', 2)], next_cursor: null } })
    const res = await get(bus)
    expect([res.status, await res.json()]).toEqual([200, { analytics: [row('Code0001', 2)] }])
  })

  it('answers a page that fails as its error, never part of the list', async () => {
    const { bus } = pagedSummary({
      first: { analytics: [row('Code0001', 2)], next_cursor: 'p2' },
      p2: new AppError('timeout', 'analytics.v1.summary did not answer in time'),
    })
    const res = await get(bus)
    expect([res.status, await res.json()]).toEqual([504, { error: 'the service did not answer in time, please retry shortly' }])
  })
})
