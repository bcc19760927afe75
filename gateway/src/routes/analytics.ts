import { Elysia } from 'elysia'
import { ANALYTICS_SUBJECTS as S, AnalyticsQuery, AnalyticsSummary, type Bus, CodeBreakdown, SCAN_EXPORT_COLUMNS } from '@lr/proto'
import { principalOf } from '../context'
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

/** /v1/dynqrcodes analytics: each route forwards to services/analytics and returns its answer. */
export const analyticsRoutes = (bus: Bus) =>
  new Elysia({ name: 'analytics-routes', prefix: '/v1/dynqrcodes' })
    .get('/analytics', ({ request }) => bus.request(S.summary, { principal: principalOf(request), query: queryOf(request) }),
      { detail: docs.summary })
    .get('/:code/analytics', ({ request, params }) =>
      bus.request(S.breakdown, { principal: principalOf(request), code: params.code, query: queryOf(request) }),
      { detail: docs.breakdown })
    .get('/:code/analytics/export', ({ request, params }) =>
      csvResponse(bus, S.export, { principal: principalOf(request), code: params.code, query: queryOf(request) }, `${params.code}-scans.csv`, request),
      { detail: docs.export })
