import { Elysia } from 'elysia'
import { ANALYTICS_SUBJECTS as S, AnalyticsQuery, AnalyticsSummary, type Bus, CodeBreakdown, SCAN_EXPORT_COLUMNS, type SummaryPage } from '@lr/proto'
import { principalOf } from '../context'
import { readyJson } from '../ready-json'
import { csvResponse } from './csv-stream'
import { doc, queryOf } from './openapi'
import { examples } from './openapi-examples'

const tag = 'Analytics'
const ex = examples.analytics
const path = { code: 'A dynamic code of the library, soft-deleted ones included (their history is kept).' }
const unique = 'Unique scans are distinct visitors (a keyed hash of address and user agent).'

/** The OpenAPI entry of each route (openapi.ts). */
const docs = {
  summary: doc({
    operationId: 'getAnalyticsSummary', tag, summary: 'Total and unique scans of every live dynamic code',
    description: `Every live code of the library, oldest first, zeros included. ${unique}`,
    query: AnalyticsQuery, ok: AnalyticsSummary, okExamples: ex.summary, answer: 'The totals per code.',
  }),
  breakdown: doc({
    operationId: 'getCodeAnalytics', tag, summary: 'Daily counts and breakdowns of one code', path, notFound: true,
    description: `\`daily\` ascending, days with scans only; countries, devices, os and browsers by scans, descending. ${unique} \`fallback_scans\`: scans an expired or capped code sent to its fallback_url, in no other number.`,
    query: AnalyticsQuery, ok: CodeBreakdown, okExamples: ex.breakdown, answer: 'The breakdown of the code.',
  }),
  export: doc({
    operationId: 'exportCodeScans', tag, summary: 'Export every scan of one code as CSV', path, notFound: true, query: AnalyticsQuery,
    ok: { csv: SCAN_EXPORT_COLUMNS }, answer: 'Every scan in the range, oldest first (file `<code>-scans.csv`).',
  }),
}

/**
 * The summary joined from the analytics service's pages (SummaryPage): one bus reply holding
 * every code of a large library exceeded BUS_MAX_PAYLOAD_BYTES. A library of one page answers as
 * any route does; a larger one is kept as JSON text while the next page is asked, not as objects.
 * `next_cursor` absent: an analytics service from before pages, which answers the whole summary.
 */
async function summaryOf(bus: Bus, payload: object): Promise<AnalyticsSummary | Response> {
  let page = await bus.request<SummaryPage>(S.summary, { ...payload, cursor: null })
  if (!page.next_cursor) return { analytics: page.analytics }
  const parts: string[] = []
  for (;;) {
    if (page.analytics.length > 0) parts.push(JSON.stringify(page.analytics).slice(1, -1))
    if (!page.next_cursor) return readyJson(new TextEncoder().encode(`{"analytics":[${parts.join(',')}]}`))
    page = await bus.request<SummaryPage>(S.summary, { ...payload, cursor: page.next_cursor })
  }
}

/** /v1/dynqrcodes analytics: each route forwards to services/analytics and returns its answer. */
export const analyticsRoutes = (bus: Bus) =>
  new Elysia({ name: 'analytics-routes', prefix: '/v1/dynqrcodes' })
    .get('/analytics', ({ request }) => summaryOf(bus, { principal: principalOf(request), query: queryOf(request) }),
      { detail: docs.summary })
    .get('/:code/analytics', ({ request, params }) =>
      bus.request(S.breakdown, { principal: principalOf(request), code: params.code, query: queryOf(request) }),
      { detail: docs.breakdown })
    .get('/:code/analytics/export', ({ request, params }) =>
      csvResponse(bus, S.export, { principal: principalOf(request), code: params.code, query: queryOf(request) }, `${params.code}-scans.csv`, request),
      { detail: docs.export })
