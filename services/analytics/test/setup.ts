import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteAnalyticsStore } from '../src/adapters/analytics-store.sqlite'
import { createAnalyticsService, type AnalyticsDeps } from '../src/service'
import { fakeDirectory } from './fixtures'

/** Alice's library: two live codes and a soft-deleted one; Bob's: one code. */
export const LIBRARIES = {
  acct_a: [{ code: 'Code0001' }, { code: 'Code0002' }, { code: 'Gone0001', deleted: true }],
  acct_b: [{ code: 'Bobs0001' }],
}

/** An analytics service over an in-memory SQLite store and a fake directory of LIBRARIES. */
export function setup(deps: Partial<AnalyticsDeps> = {}) {
  const db = openSqlite(':memory:')
  const store = createSqliteAnalyticsStore(db)
  const directory = fakeDirectory(LIBRARIES)
  const service = createAnalyticsService({ store, directory, ...deps })
  return { service, store, directory, close: () => db.close() }
}
