import type { mongo } from 'mongoose'
import type { StoredScan } from '../ports'

export type ScanDoc = Omit<StoredScan, 'scan_id'> & { _id: string }

/** The collections of the Mongo AnalyticsStore (same shapes as the SQLite tables). */
export function analyticsCollections(db: mongo.Db) {
  return {
    scans: db.collection<ScanDoc>('analytics_scans'),
    codeVisitors: db.collection<{ _id: string; code: string; visitor_id: string }>('analytics_code_visitors'),
    dayVisitors: db.collection<{ _id: string; code: string; day: string; visitor_id: string }>('analytics_day_visitors'),
    codeTotals: db.collection<{ _id: string; scans: number; uniques: number }>('analytics_code_totals'),
    dayTotals: db.collection<{ _id: string; code: string; day: string; scans: number; uniques: number }>('analytics_day_totals'),
    codeDims: db.collection<{ _id: string; code: string; dim: string; value: string; scans: number }>('analytics_code_dims'),
    dayDims: db.collection<{ _id: string; code: string; day: string; dim: string; value: string; scans: number }>('analytics_day_dims'),
    daySketches: db.collection<{ _id: string; code: string; day: string; regs: mongo.Binary }>('analytics_day_sketches'),
  }
}
export type AnalyticsCollections = ReturnType<typeof analyticsCollections>
