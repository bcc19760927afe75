import { describe, expect, it } from 'bun:test'
import { beginShutdown, countedInShutdown } from '@lr/platform/shutdown-failures'
import { captureLog } from './log-capture'

const closedSqlite = () => new RangeError('Cannot use a closed database')
const expiredSession = () => Object.assign(new Error('Cannot use a session that has ended'), { name: 'MongoExpiredSessionError' })

/** Failures the stop causes are counted per kind, not logged one by one; every other error is the caller's to log. */
describe('failures caused by the shutdown', () => {
  it('are counted only once the process is stopping, and only when a store or connection was closed', () => {
    expect(countedInShutdown('store closed', closedSqlite(), { store: 'things' })).toBe(false)
    const summarise = beginShutdown()
    try {
      expect(countedInShutdown('store closed', closedSqlite(), { store: 'things' })).toBe(true)
      expect(countedInShutdown('bus handler failed', expiredSession())).toBe(true)
      expect(countedInShutdown('bus handler failed', new Error('a bug'))).toBe(false)
    } finally {
      summarise()
    }
    expect(countedInShutdown('bus handler failed', expiredSession())).toBe(false)
  })

  it('are written as one warn line per kind, with how many, every interval and at the end', async () => {
    const { lines, restore } = captureLog()
    const summarise = beginShutdown(50)
    try {
      for (let i = 0; i < 3; i++) countedInShutdown('store closed', closedSqlite(), { store: 'records' })
      countedInShutdown('store closed', closedSqlite(), { store: 'auth' })
      expect(lines).toEqual([])
      await Bun.sleep(80)
      countedInShutdown('store closed', closedSqlite(), { store: 'records' })
      countedInShutdown('bus handler failed', expiredSession())
    } finally {
      summarise()
      restore()
    }
    const err = { type: 'RangeError', message: 'Cannot use a closed database' }
    expect(lines).toEqual([
      { msg: 'failures caused by the shutdown', kind: 'store closed', store: 'records', failures: 3, err },
      { msg: 'failures caused by the shutdown', kind: 'store closed', store: 'auth', failures: 1, err },
      { msg: 'failures caused by the shutdown', kind: 'store closed', store: 'records', failures: 1, err },
      { msg: 'failures caused by the shutdown', kind: 'bus handler failed', failures: 1, err: { type: 'MongoExpiredSessionError', message: 'Cannot use a session that has ended' } },
    ])
  })
})
