import { Database } from 'bun:sqlite'
import { describe, expect, it, setSystemTime } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AppError } from '@lr/proto'
import { connectMongo } from '@lr/platform/mongo'
import { beginShutdown } from '@lr/platform/shutdown-failures'
import { openSqlite } from '@lr/platform/sqlite'
import { withStoreMetrics } from '@lr/platform/store-metrics'
import { mongoSkipReason, startFerretDb } from '../../test/harness/ferretdb'
import { captureLog } from './log-capture'

const failure = (promise: Promise<unknown>) => promise.then(() => { throw new Error('resolved') }, (error: unknown) => error)

/** A store that cannot be reached is a 503 with Retry-After, never a 500; other errors pass unchanged. */
describe('a store that cannot be reached', () => {
  it.skipIf(Boolean(mongoSkipReason()))('MongoDB gone: the operation is an AppError unavailable (503, Retry-After 1), its cause logged; a duplicate key still passes as it is', async () => {
    const server = await startFerretDb()
    const conn = await connectMongo(server.url)
    const things = conn.db!.collection<{ _id: string }>('things')
    const store = withStoreMetrics('things', {
      insert: async (id: string) => void (await things.insertOne({ _id: id })),
      find: async (id: string) => things.findOne({ _id: id }),
    })
    await store.insert('a')
    const duplicate = await failure(store.insert('a'))
    expect([(duplicate as Error).name, (duplicate as { code?: number }).code]).toEqual(['MongoServerError', 11000])
    const log = captureLog()
    try {
      await server.stop()
      const gone = await failure(store.find('a'))
      expect(gone).toBeInstanceOf(AppError)
      expect([(gone as AppError).code, (gone as AppError).status, (gone as AppError).details?.retryAfter]).toEqual(['unavailable', 503, 1])
      // The find meets the closed connection (MongoNetworkError), or, when its command waited on a
      // socket whose close it missed, is ended at the next failed check and its retry finds no
      // server (MongoServerSelectionError; platform/src/mongo.ts, inUseInterrupter).
      expect(log.lines.filter((line) => line.msg === 'store unreachable')).toEqual([expect.objectContaining({ store: 'things', operation: 'find', err: expect.objectContaining({ type: expect.stringMatching(/^Mongo(Network|ServerSelection)Error$/) }) })])
    } finally {
      log.restore()
      await conn.close(true)
    }
  }, 30_000)

  it.skipIf(Boolean(mongoSkipReason()))('MongoDB client closed by the stop under calls in flight: each is unavailable, and the log has one line counting them', async () => {
    const server = await startFerretDb()
    const conn = await connectMongo(server.url)
    const things = conn.db!.collection<{ _id: string }>('things')
    const store = withStoreMetrics('things', { find: async (id: string) => things.findOne({ _id: id }) })
    const log = captureLog()
    const summarise = beginShutdown()
    try {
      // Some in flight may be answered before the close; every later one fails.
      const outcome = () => store.find('a').then(() => null, (error: unknown) => error)
      const inFlight = Array.from({ length: 100 }, outcome)
      await Bun.sleep(5)
      await conn.close()
      const failures = [...(await Promise.all(inFlight)), ...(await Promise.all([1, 2, 3].map(outcome)))].filter((error) => error !== null)
      expect(failures.length).toBeGreaterThan(3)
      expect(new Set(failures.map((error) => (error as AppError).code))).toEqual(new Set(['unavailable']))
      expect(log.lines).toEqual([])
      summarise()
      expect(log.lines).toEqual([expect.objectContaining({ msg: 'failures caused by the shutdown', kind: 'store closed', store: 'things', failures: failures.length })])
    } finally {
      summarise()
      log.restore()
      await server.stop()
    }
  }, 30_000)

  // The watchdog makes a client again when a check hangs (platform/src/mongo.ts): the calls it
  // ends so fail MongoClientClosedError, outside any stop. They had been a 500 ("bus handler failed").
  it.skipIf(Boolean(mongoSkipReason()))('MongoDB client closed under a call outside a stop (the watchdog making it again): unavailable, its cause logged', async () => {
    const server = await startFerretDb()
    const conn = await connectMongo(server.url)
    const things = conn.db!.collection<{ _id: string }>('things')
    const store = withStoreMetrics('things', { find: async (id: string) => things.findOne({ _id: id }) })
    await store.find('a')
    const log = captureLog()
    let closing: Promise<unknown> | undefined
    process.kill(server.pid!, 'SIGSTOP')
    try {
      const pending = failure(store.find('a'))
      await Bun.sleep(200)
      // Not awaited: the close itself waits on the frozen server.
      closing = conn.getClient().close(true).catch(() => undefined)
      const closed = await pending
      expect([(closed as AppError).code, (closed as AppError).status]).toEqual(['unavailable', 503])
      expect(log.lines.filter((line) => line.msg === 'store unreachable')).toEqual([expect.objectContaining({ store: 'things', operation: 'find', err: expect.objectContaining({ type: 'MongoClientClosedError' }) })])
    } finally {
      process.kill(server.pid!, 'SIGCONT')
      log.restore()
      await closing
      await conn.close(true)
      await server.stop()
    }
  }, 30_000)

  it('SQLite that may not write its file: unavailable too, for SQLITE_READONLY (a file opened read-only) and its extended codes (SQLITE_READONLY_DBMOVED: the file removed under a rollback-journal connection)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-store-errors-'))
    const path = join(dir, 'things.sqlite')
    const writer = new Database(path)
    writer.exec("CREATE TABLE things (id TEXT PRIMARY KEY); INSERT INTO things (id) VALUES ('a')")
    writer.close()
    // What SQLite does when this process may not open the file for writing: it opens it read-only.
    const readOnly = new Database(path, { readonly: true })
    const moved = new Database(join(dir, 'moved.sqlite'))
    moved.exec('PRAGMA journal_mode = DELETE; CREATE TABLE things (id TEXT PRIMARY KEY)')
    rmSync(join(dir, 'moved.sqlite'))
    const insertInto = (db: Database) => withStoreMetrics('things', { insert: async (id: string) => void db.query('INSERT INTO things (id) VALUES (?)').run(id) })
    const log = captureLog()
    try {
      const failures = [await failure(insertInto(readOnly).insert('b')), await failure(insertInto(moved).insert('b'))]
      expect(failures.map((error) => [error instanceof AppError, (error as AppError).code, (error as AppError).status, (error as AppError).details?.retryAfter])).toEqual([
        [true, 'unavailable', 503, 1],
        [true, 'unavailable', 503, 1],
      ])
      expect(log.lines.map((line) => [line.msg, line.err.type, line.err.code])).toEqual([
        ['store unreachable', 'SQLiteError', 'SQLITE_READONLY'],
        ['store unreachable', 'SQLiteError', 'SQLITE_READONLY_DBMOVED'],
      ])
      // What was committed before stays: the failed write changed nothing.
      expect(readOnly.query('SELECT id FROM things').all()).toEqual([{ id: 'a' }])
    } finally {
      log.restore()
      readOnly.close()
      moved.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('SQLite locked past its busy timeout: unavailable too, logged once per 10 s while it lasts; a constraint error passes as it is', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-store-errors-'))
    try {
      const db = openSqlite(join(dir, 'things.sqlite'))
      db.exec('PRAGMA busy_timeout = 50; CREATE TABLE things (id TEXT PRIMARY KEY)')
      const store = withStoreMetrics('things', { insert: async (id: string) => void db.query('INSERT INTO things (id) VALUES (?)').run(id) })
      await store.insert('a')
      const duplicate = await failure(store.insert('a'))
      expect((duplicate as { code?: string }).code).toBe('SQLITE_CONSTRAINT_PRIMARYKEY')
      const other = new Database(join(dir, 'things.sqlite'))
      other.exec('BEGIN EXCLUSIVE')
      const log = captureLog()
      try {
        const locked = await failure(store.insert('b'))
        expect([(locked as AppError).code, (locked as AppError).status]).toEqual(['unavailable', 503])
        // The outage goes on: its first failure is a line, the next ones within 10 s are counted
        // into the next line (one a request had buried the cause under load).
        for (const id of ['c', 'd']) expect(((await failure(store.insert(id))) as AppError).code).toBe('unavailable')
        expect(log.lines.map((line) => [line.msg, line.repeated])).toEqual([['store unreachable', undefined]])
        setSystemTime(new Date(Date.now() + 10_001))
        await failure(store.insert('e'))
        expect(log.lines.map((line) => [line.msg, line.repeated])).toEqual([['store unreachable', undefined], ['store unreachable', 2]])
        expect(log.lines[1]?.err).toEqual(expect.objectContaining({ message: expect.stringContaining('locked') }))
      } finally {
        setSystemTime()
        log.restore()
        other.exec('ROLLBACK')
        other.close()
        db.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
