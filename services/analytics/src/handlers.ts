import { type Bus, decode } from '@lr/proto'
import { ANALYTICS_QUEUE, ANALYTICS_SUBJECTS, BreakdownRequest, ScanCountRequest, ScanExportRequest, SummaryRequest } from '@lr/proto'
import type { AnalyticsService } from './service'

/** Serves every ANALYTICS_SUBJECTS subject in queue group `analytics`; returns one unsubscribe for all. */
export function serveAnalytics(bus: Bus, service: AnalyticsService): () => void {
  const opts = { queue: ANALYTICS_QUEUE }
  const subscriptions = [
    bus.serve(ANALYTICS_SUBJECTS.summary, async (p) => {
      const { principal, query, cursor = null } = decode(SummaryRequest, p)
      return service.summary(principal, query, cursor)
    }, opts),
    bus.serve(ANALYTICS_SUBJECTS.breakdown, async (p) => {
      const { principal, code, query } = decode(BreakdownRequest, p)
      return service.breakdown(principal, code, query)
    }, opts),
    bus.serve(ANALYTICS_SUBJECTS.export, async (p) => {
      const { principal, code, query, cursor } = decode(ScanExportRequest, p)
      return service.exportPage(principal, code, query, cursor)
    }, opts),
    bus.serve(ANALYTICS_SUBJECTS.count, async (p) => service.count(decode(ScanCountRequest, p).code), opts),
  ]
  return () => subscriptions.forEach((unsubscribe) => unsubscribe())
}
