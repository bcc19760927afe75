import type { mongo } from 'mongoose'
import { bulkUpdate } from '@lr/platform/mongo-bulk'
import { dayOf } from '../days'
import type { AnalyticsStore } from '../ports'

type FallbackDoc = { _id: string; code: string; day: string }

/**
 * The fallback part of the Mongo AnalyticsStore: one document per fallback scan, `_id` its
 * scan_id, so an upsert is idempotent without the journal the aggregates need (no counter to keep).
 */
export async function createMongoFallbacks(db: mongo.Db): Promise<Pick<AnalyticsStore, 'applyFallbacks' | 'fallbackCount'>> {
  const fallbacks = db.collection<FallbackDoc>('analytics_fallback_scans')
  await fallbacks.createIndex({ code: 1, day: 1 })
  return {
    async applyFallbacks(scans) {
      const ops = scans.map(({ scan_id, code, scanned_at }) => ({
        updateOne: { filter: { _id: scan_id }, update: { $setOnInsert: { code, day: dayOf(scanned_at) } }, upsert: true },
      }))
      // In short commands: a batch delivered again matches every document (mongo-bulk.ts).
      return bulkUpdate(fallbacks, ops, { ordered: true })
    },
    async fallbackCount(code, range) {
      const day: Record<string, string> = {}
      if (range.from !== null) day.$gte = range.from
      if (range.to !== null) day.$lte = range.to
      return fallbacks.countDocuments({ code, ...(Object.keys(day).length > 0 && { day }) })
    },
  }
}
