import { Elysia } from 'elysia'
import { ANALYTICS_SUBJECTS as S, AnalyticsSummary, type Bus, CodeBreakdown } from '@lr/proto'
import { principalOf } from '../context'
import { csvResponse } from './csv-stream'
import { doc, queryOf } from './openapi'

const tag = 'Analytics'
const range = 'Query `from`, `to`: YYYY-MM-DD, UTC, inclusive.'

/** /v1/dynqrcodes analytics: each route forwards to services/analytics and returns its answer. */
export const analyticsRoutes = (bus: Bus) =>
  new Elysia({ name: 'analytics-routes', prefix: '/v1/dynqrcodes' })
    .get('/analytics', ({ request }) => bus.request(S.summary, { principal: principalOf(request), query: queryOf(request) }),
      { detail: doc(tag, `Total and unique scans of every live dynamic code of the library. ${range}`, { ok: AnalyticsSummary }) })
    .get('/:code/analytics', ({ request, params }) =>
      bus.request(S.breakdown, { principal: principalOf(request), code: params.code, query: queryOf(request) }),
      { detail: doc(tag, `Daily counts and breakdowns by country, device, OS and browser of one code. ${range}`, { ok: CodeBreakdown }) })
    .get('/:code/analytics/export', ({ request, params }) =>
      csvResponse(bus, S.export, { principal: principalOf(request), code: params.code, query: queryOf(request) }, `${params.code}-scans.csv`),
      { detail: doc(tag, `Every scan of one code as CSV, oldest first. ${range}`, { csv: true }) })
