import { afterEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '@lr/proto'
import { ALL_TIME } from '../src/days'
import { ingestInWorker } from '../src/ingest-in-worker'
import { openAnalyticsStore } from '../src/start'
import { metricsResponse } from '@lr/platform/metrics'
import { checkpointElsewhere, openSqlite } from '@lr/platform/sqlite'
import { sample } from '../../../test/harness/metrics'
import { waitUntil } from '../../../test/harness/ports'
import { captureLog } from '@lr/platform/testing/log-capture'

const event = (n: number, visitor = 'a') => ({
  scan_id: `0190a000-0000-7000-8000-${String(n).padStart(12, '0')}`,
  code: 'Code0001',
  scanned_at: Date.UTC(2025, 0, 10, 12) + n,
  user_agent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  visitor_id: visitor.repeat(64).slice(0, 64),
  country: 'DE',
})

describe('ingestInWorker', () => {
  const dirs: string[] = []
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })))

  it('stores each batch in the shared SQLite file before it resolves', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-ingest-'))
    dirs.push(dir)
    const config = loadConfig({ DATA_DIR: dir })
    const worker = await ingestInWorker(dir)
    const reader = await openAnalyticsStore(config)
    try {
      await worker.apply([event(1), event(2, 'b'), event(3)])
      const breakdown = await reader.store.breakdown('Code0001', ALL_TIME)
      expect([breakdown.total_scans, breakdown.unique_scans]).toEqual([3, 2])
      expect(breakdown.devices).toEqual([{ device: 'mobile', scans: 3 }])
      await worker.apply([event(1), event(4)]) // scan 1 again: applied once
      expect((await reader.store.breakdown('Code0001', ALL_TIME)).total_scans).toBe(4)
      // The writes are timed on this thread, the one whose /metrics is served.
      const series = 'lr_store_operation_duration_seconds_count{store="analytics",operation="applyScans",outcome="ok"}'
      expect(sample(await (await metricsResponse()).text(), series)).toBeGreaterThanOrEqual(2)
    } finally {
      await worker.close()
      await reader.close()
    }
  })

  // The Worker is a VM with a heap of its own, which this thread's memoryUsage() leaves out.
  it('hands its heap to this thread\'s metrics: lr_thread_heap_used_bytes{thread="ingest"}, summed into process_heap_used_bytes, gone once closed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-ingest-'))
    dirs.push(dir)
    const worker = await ingestInWorker(dir)
    const heap = async () => {
      const text = await (await metricsResponse()).text()
      return { ingest: sample(text, 'lr_thread_heap_used_bytes{thread="ingest"}'), main: sample(text, 'lr_thread_heap_used_bytes{thread="main"}')!, process: sample(text, 'process_heap_used_bytes')! }
    }
    try {
      await worker.apply([event(1)])
      const { ingest, main, process } = await heap()
      expect(ingest).toBeGreaterThan(1_000_000) // a VM with SQLite and the user-agent parser loaded
      // Two readings of this thread's heap in one scrape: within a few hundred KiB of each other.
      expect(Math.abs(process - (main + ingest!))).toBeLessThan(512 * 1024)
    } finally {
      await worker.close()
    }
    expect((await heap()).ingest).toBeUndefined()
  })

  /** A worker on a fresh directory, a reader of its store and this thread's log lines, for `test`. */
  async function withWorker(test: (worker: Awaited<ReturnType<typeof ingestInWorker>>, reader: Awaited<ReturnType<typeof openAnalyticsStore>>, logged: ReturnType<typeof captureLog>) => Promise<void>) {
    const dir = mkdtempSync(join(tmpdir(), 'lr-ingest-'))
    dirs.push(dir)
    const worker = await ingestInWorker(dir)
    const reader = await openAnalyticsStore(loadConfig({ DATA_DIR: dir }))
    const logged = captureLog()
    try {
      await test(worker, reader, logged)
    } finally {
      logged.restore()
      await worker.close()
      await reader.close()
    }
  }
  const malformedLines = (logged: ReturnType<typeof captureLog>) => logged.lines.filter((line) => line.msg === 'dropped malformed scan events')

  it('drops malformed events, logs how many on this thread, and stores the rest', () =>
    withWorker(async (worker, reader, logged) => {
      await worker.apply([event(1), { ...event(2), visitor_id: 'not-a-hash' }, { code: 'Code0001' }])
      expect((await reader.store.breakdown('Code0001', ALL_TIME)).total_scans).toBe(1)
      expect(malformedLines(logged)).toEqual([{ msg: 'dropped malformed scan events', dropped: 2 }])
    }))

  it('applies batches handed over as text (the in-process bus\'s), a text that is not a JSON array as one malformed event', () =>
    withWorker(async (worker, reader, logged) => {
      await worker.applyTexts([JSON.stringify([event(1), event(2, 'b')]), 'not json', JSON.stringify([event(3)]), '{"a":1}'], 5)
      const breakdown = await reader.store.breakdown('Code0001', ALL_TIME)
      expect([breakdown.total_scans, breakdown.unique_scans]).toEqual([3, 2])
      expect(malformedLines(logged)).toEqual([{ msg: 'dropped malformed scan events', dropped: 2 }])
      await worker.applyTexts([JSON.stringify([event(4)])], 1)
      expect((await reader.store.breakdown('Code0001', ALL_TIME)).total_scans).toBe(4)
    }))

  it('fails to start, with the reason, when the database cannot be opened', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-ingest-'))
    dirs.push(dir)
    const notADirectory = join(dir, 'file')
    await Bun.write(notADirectory, 'x')
    await expect(ingestInWorker(notADirectory)).rejects.toThrow(/^scan ingestion worker: /)
  })
  /** A fresh directory and a SQLite file in it that this thread hands over (checkpointElsewhere), and the way back. */
  function handedOverFile(name: string) {
    const dir = mkdtempSync(join(tmpdir(), 'lr-ingest-'))
    dirs.push(dir)
    const back = checkpointElsewhere()
    const path = join(dir, name)
    return { dir, path, db: openSqlite(path), back }
  }

  it("checkpoints the SQLite files this thread handed over (bun start's API stores), so this thread does not", async () => {
    const { dir, path, db, back } = handedOverFile('records.sqlite')
    const worker = await ingestInWorker(dir)
    try {
      db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)')
      const insert = db.prepare('INSERT INTO t (body) VALUES (?)')
      db.transaction(() => {
        for (let i = 0; i < 300; i++) insert.run('x'.repeat(1024))
      })()
      // Far below its own connection's bound: only the Worker copies the WAL into the file.
      const before = statSync(path).size
      await waitUntil(() => statSync(path).size > before + 250 * 1024, 5000, 'the Worker to checkpoint the file')
      expect(statSync(path).size).toBeGreaterThan(before + 250 * 1024)
    } finally {
      await worker.close()
      db.close()
      back()
    }
  })

  it('counts and logs (once a minute per file) the handed-over files it cannot checkpoint', async () => {
    const { dir, path, db, back } = handedOverFile('webhooks.sqlite')
    // Removed before the Worker first opens it: its own connection goes on, but no other can open the file.
    for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true })
    const logged = captureLog()
    const worker = await ingestInWorker(dir)
    const series = 'lr_sqlite_checkpoint_failures_total{file="webhooks.sqlite"}'
    const failures = async () => sample(await (await metricsResponse()).text(), series) ?? 0
    try {
      await waitUntil(async () => (await failures()) >= 3, 5000, 'three failed checkpoints')
      expect(await failures()).toBeGreaterThanOrEqual(3)
      const lines = logged.lines.filter((line) => line.file === path)
      expect(lines).toEqual([{ msg: expect.stringMatching(/^could not checkpoint a SQLite file/), file: path, err: { type: 'SQLiteError', message: expect.stringMatching(/unable to open/i) } }])
    } finally {
      logged.restore()
      await worker.close()
      db.close()
      back()
    }
  })
})
