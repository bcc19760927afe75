import { Database } from 'bun:sqlite'
import { afterEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '@lr/proto'
import type { Logger } from '@lr/proto'
import { installLogger, log } from '@lr/platform/log'
import { createSqliteHealth, REPLACED, type SqliteHealthOptions } from '@lr/platform/sqlite-health'
import { openServiceStore } from '@lr/platform/store'
import { withStoreMetrics } from '@lr/platform/store-metrics'

/** A store over one table, opened as every service opens its own (openServiceStore), at `${dir}/things.sqlite`. */
async function openThings(dir: string, sqliteHealth?: SqliteHealthOptions) {
  return openServiceStore(loadConfig({ DATA_DIR: dir }), undefined, {
    name: 'things',
    sqliteHealth,
    sqlite: (db) => {
      db.exec('CREATE TABLE IF NOT EXISTS things (id TEXT PRIMARY KEY, body TEXT)')
      // Its port's own ping, as the adapters have it: the connection answers.
      return {
        ping: async () => db.query('SELECT 1 AS ok').get() !== null,
        insert: async (id: string, body = '') => void db.query('INSERT INTO things (id, body) VALUES (?, ?)').run(id, body),
        busyTimeout: () => (db.query('PRAGMA busy_timeout').get() as { timeout: number }).timeout,
        /** A full disk as SQLite reports it (SQLITE_FULL): from now on the file may not grow. */
        fill: () => db.exec(`PRAGMA max_page_count = ${(db.query('PRAGMA page_count').get() as { page_count: number }).page_count}`),
      }
    },
    mongo: async () => { throw new Error('not used') },
  })
}

/** Every line logged, with its level, until restored. */
function captureLevels() {
  const lines: { level: string; msg: string; [field: string]: unknown }[] = []
  const at = (level: string) => (fields: object, msg: string) => void lines.push({ level, ...fields, msg })
  const logger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), child: () => logger } as unknown as Logger
  const previous = log()
  installLogger(logger)
  return { lines, restore: () => void installLogger(previous) }
}

const dirs: string[] = []
const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true }))
})
async function fresh(sqliteHealth?: SqliteHealthOptions) {
  const dir = mkdtempSync(join(tmpdir(), 'lr-sqlite-health-'))
  dirs.push(dir)
  const opened = await openThings(dir, sqliteHealth)
  cleanups.push(() => opened.close())
  const logged = captureLevels()
  cleanups.push(logged.restore)
  return { dir, path: join(dir, 'things.sqlite'), store: opened.store, logged }
}
/** Another connection to the file, as another process would have (the admin command line, a second product). */
function other(path: string) {
  const db = new Database(path)
  cleanups.push(() => db.close())
  return db
}

describe('the readiness of a SQLite store', () => {
  it('is ready while its file answers, and its probe writes nothing', async () => {
    const { path, store } = await fresh()
    const reader = other(path)
    const version = () => (reader.query('PRAGMA data_version').get() as { data_version: number }).data_version
    const before = version()
    expect(await store.ping()).toBe(true)
    expect(version()).toBe(before)
  })

  it('is not ready while another connection holds the write lock, answering within a fraction of the busy timeout, and ready again once it is released', async () => {
    const { path, store } = await fresh()
    const locker = other(path)
    locker.exec('BEGIN EXCLUSIVE')
    const started = performance.now()
    expect(await store.ping()).toBe(false)
    // The store's connection waits 5 s for a lock; its probe only PROBE_BUSY_TIMEOUT_MS.
    expect(performance.now() - started).toBeLessThan(1000)
    locker.exec('ROLLBACK')
    expect(await store.ping()).toBe(true)
    // The probe left the connection's own busy timeout as it was (openSqlite's 5 s).
    expect(store.busyTimeout()).toBe(5000)
  })

  it('is not ready after a call failed as unusable (a full disk), until a committed write of its own shows it takes writes again', async () => {
    // Without the lock probe (a file another thread writes), so only the failure can make it unready.
    const { path, store } = await fresh({ lockProbe: false })
    const reader = other(path)
    const version = () => (reader.query('PRAGMA data_version').get() as { data_version: number }).data_version
    const locker = other(path)
    locker.exec('BEGIN EXCLUSIVE')
    expect(await store.ping()).toBe(true)
    locker.exec('ROLLBACK')
    store.fill()
    await expect(store.insert('big', 'x'.repeat(100_000))).rejects.toMatchObject({ code: 'unavailable', status: 503 })
    // Its own write cannot commit while the lock is held: still not ready.
    locker.exec('BEGIN EXCLUSIVE')
    expect(await store.ping()).toBe(false)
    locker.exec('ROLLBACK')
    const before = version()
    expect(await store.ping()).toBe(true)
    expect(version()).toBe(before + 1)
    // Ready again, its probes write nothing again.
    expect(await store.ping()).toBe(true)
    expect(version()).toBe(before + 1)
  })

  it('stays not ready after a failure while its file system has less free than FREE_BYTES_AFTER_FAILURE, though a write of one page would commit (a full disk: it lands in WAL space the failed write left)', async () => {
    const { path, store } = await fresh({ freeBytesAfterFailure: Number.MAX_SAFE_INTEGER })
    const reader = other(path)
    const version = () => (reader.query('PRAGMA data_version').get() as { data_version: number }).data_version
    store.fill()
    await expect(store.insert('big', 'x'.repeat(100_000))).rejects.toMatchObject({ code: 'unavailable', status: 503 })
    const before = version()
    expect([await store.ping(), await store.ping()]).toEqual([false, false])
    // It does not even try its write.
    expect(version()).toBe(before)
  })

  it('is not ready once a write failed because its file may not be written (SQLITE_READONLY), though its probe takes the write lock; what was committed stays', async () => {
    const { path } = await fresh()
    other(path).exec("INSERT INTO things (id) VALUES ('kept')")
    // SQLite opens the file read-only when this process may not open it for writing (its mode, an
    // immutable file, a read-only mount): the lock is taken, every write fails.
    const db = new Database(path, { readonly: true })
    cleanups.push(() => db.close())
    const store = withStoreMetrics('things', {
      ping: async () => db.query('SELECT 1 AS ok').get() !== null,
      insert: async (id: string) => void db.query('INSERT INTO things (id) VALUES (?)').run(id),
    }, createSqliteHealth(db, path))
    expect(await store.ping()).toBe(true)
    await expect(store.insert('new')).rejects.toMatchObject({ code: 'unavailable', status: 503 })
    // Its probe's own write fails too, so it stays not ready (until a restart opens the file for writing).
    expect([await store.ping(), await store.ping()]).toEqual([false, false])
    expect(db.query('SELECT id FROM things').all()).toEqual([{ id: 'kept' }])
  })

  const replacedLine = (path: string) => ({ level: 'error', file: path, msg: REPLACED })

  it('is not ready once its file is removed under it (writes would go where no restart finds them), in one error line naming the file, not one per probe', async () => {
    const { path, store, logged } = await fresh()
    for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true })
    // Its connection still writes, into the removed file.
    await store.insert('lost')
    expect([await store.ping(), await store.ping(), await store.ping()]).toEqual([false, false, false])
    expect(logged.lines).toEqual([replacedLine(path)])
  })

  it('is not ready once another file takes its path', async () => {
    const { dir, path, store, logged } = await fresh()
    const stranger = new Database(join(dir, 'stranger.sqlite'))
    stranger.exec('CREATE TABLE t (a)')
    stranger.close()
    renameSync(join(dir, 'stranger.sqlite'), path)
    expect(await store.ping()).toBe(false)
    expect(logged.lines).toEqual([replacedLine(path)])
  })
})
