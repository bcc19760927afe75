import { afterEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqlite } from '@lr/platform/sqlite'
import { modulesLoadedBy } from '@lr/platform/testing/loaded-modules'
import { type ChunkShape, csvChunkOf } from '@lr/platform/csv-format'
import { createSqliteLibraryStore, type SqliteKind } from '../src/adapters/sqlite-store'
import { createExportWorker, type ExportWorker } from '../src/export-in-worker'
import type { RecordBase } from '../src/ports'
import { captureLog } from '@lr/platform/testing/log-capture'
import { metricsResponse } from '@lr/platform/metrics'
import { sample } from '../../../test/harness/metrics'

type Thing = RecordBase & { thing_id: string; url: string; note?: string }
const KIND: SqliteKind = { table: 'things', idField: 'thing_id', urlField: 'url', extra: { note: 'string' } }
const LIB = 'acct:a'
const COLUMNS = ['thing_id', 'link', 'url', 'name', 'status', 'team_id', 'style', 'created_at', 'tags']
const shapeOf = (over: Partial<ChunkShape> = {}): ChunkShape =>
  ({ columns: COLUMNS, derived: { link: { prefix: 'https://s.test/', field: 'thing_id' } }, limit: 100, maxBytes: 512 * 1024, ...over })

// Names a spreadsheet or a CSV reader would trip on, and the ordinary kind.
const NAMES = ['plain', 'a, comma', 'say "hi"', 'two\nlines', '=SUM(1,2)', '+1', '-x', '@me', '\tlead', 'nul\0byte', 'ünïcödé ✓']
const thing = (n: number, over: Partial<Thing> = {}): Thing => ({
  thing_id: `t${String(n).padStart(6, '0')}`, url: `https://example.com/${n}?q=${n}`, name: NAMES[n % NAMES.length]!,
  style: n % 3 === 0 ? { fg: '#000', label: `x"${n}` } : {}, tags: n % 4 === 0 ? ['print', `q${n % 7}`] : [], status: n % 5 === 0 ? 'draft' : 'active',
  team_id: n % 2 === 0 ? null : 'team_1', created_by: 'acct_a', created_at: 1_700_000_000 + n, updated_at: 1_700_000_000 + n,
  ...(n % 6 === 0 ? { note: 'kept' } : {}), ...over,
})

const opened: { close(): void | Promise<void> }[] = []
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close()
})

/** A SQLite store on a file of its own (a Worker cannot open `:memory:`), with `count` things in LIB. */
async function fileStore(count: number) {
  const dir = mkdtempSync(join(tmpdir(), 'lr-export-worker-'))
  const db = openSqlite(join(dir, 'things.sqlite'))
  opened.push({ close: () => (db.close(), rmSync(dir, { recursive: true, force: true })) })
  const store = createSqliteLibraryStore<Thing, Partial<Thing>>(db, KIND)
  for (let n = 0; n < count; n += 500) await store.insertMany(LIB, Array.from({ length: Math.min(500, count - n) }, (_, i) => thing(n + i)))
  return { db, store }
}

function workerOf(store: Awaited<ReturnType<typeof fileStore>>['store'], idleMs?: number): ExportWorker {
  const worker = createExportWorker(store.exportFrom!, { store: 'things', idleMs })
  opened.push({ close: () => worker.close() })
  return worker
}

/** Every chunk of the library's export through `make`, from the start, each told the rows the one before found to fit (as the service does). */
async function chunksOf(make: (after: number, first: boolean, start: number | undefined) => Promise<{ csv: string; next: string | null; rows: number; ahead?: boolean }>) {
  const chunks: { csv: string; next: string | null; rows: number; ahead?: boolean }[] = []
  for (let after = 0, first = true, start: number | undefined; ; first = false) {
    const chunk = await make(after, first, start)
    chunks.push(chunk)
    if (chunk.next === null) return chunks
    after = Number.parseInt(chunk.next, 16)
    start = chunk.rows
  }
}

describe('export worker', () => {
  it('is offered by a store on a file only: a Worker cannot open an in-memory database', async () => {
    const { store } = await fileStore(0)
    expect(store.exportFrom?.kind).toEqual(KIND)
    expect(store.exportFrom?.path).toEndWith('things.sqlite')
    expect(createSqliteLibraryStore<Thing, Partial<Thing>>(openSqlite(':memory:'), KIND).exportFrom).toBeUndefined()
  })

  it('makes the very chunks this thread makes: same CSV, same cuts, header first', async () => {
    const { store } = await fileStore(1234)
    const shape = shapeOf()
    const inThread = await chunksOf((after, first, start) =>
      csvChunkOf({ ...shape, start }, (limit) => store.exportPage!(LIB, { limit, after: after === 0 ? undefined : after.toString(16) }), first))
    const worker = workerOf(store)
    const fromWorker = await chunksOf((after, first, start) => worker.chunk({ library: LIB, after, first, shape: { ...shape, start } }))
    expect(inThread).toHaveLength(13)
    expect(fromWorker.map(({ csv, next, rows }) => ({ csv, next, rows }))).toEqual(inThread)
    expect(fromWorker[0]!.csv).toStartWith(`${COLUMNS.join(',')}\r\n`)
    expect(fromWorker[0]!.csv).toContain(`"say ""hi"""`)
    expect(fromWorker[0]!.csv).toContain(`,https://s.test/t000001,`)
  })

  it('cuts a chunk whose rows are over the byte bound as this thread does', async () => {
    const { store } = await fileStore(0)
    await store.insertMany(LIB, Array.from({ length: 40 }, (_, n) => thing(n, { style: { blob: 'x'.repeat(n % 2 === 0 ? 6000 : 10) } })))
    const shape = shapeOf({ maxBytes: 20_000, limit: 16 })
    const inThread = await chunksOf((after, first, start) =>
      csvChunkOf({ ...shape, start }, (limit) => store.exportPage!(LIB, { limit, after: after === 0 ? undefined : after.toString(16) }), first))
    const worker = workerOf(store)
    const fromWorker = await chunksOf((after, first, start) => worker.chunk({ library: LIB, after, first, shape: { ...shape, start } }))
    expect(inThread.length).toBeGreaterThan(3)
    expect(fromWorker.map(({ csv, next, rows }) => ({ csv, next, rows }))).toEqual(inThread)
    for (const chunk of fromWorker.slice(0, -1)) expect(Buffer.byteLength(chunk.csv)).toBeLessThanOrEqual(20_000)
  })

  it('answers each chunk after the first from what it read ahead while nothing was written', async () => {
    const { store } = await fileStore(350)
    const worker = workerOf(store)
    const chunks = await chunksOf((after, first) => worker.chunk({ library: LIB, after, first, shape: shapeOf() }))
    expect(chunks.map((chunk) => chunk.ahead)).toEqual([false, true, true, true])
  })

  it("times its store reads into this thread's store metrics, as the store's own exportPage: each chunk once, a failed read as an error", async () => {
    const { db, store } = await fileStore(350)
    const worker = workerOf(store)
    const series = (outcome: string) => `lr_store_operation_duration_seconds_count{store="things",operation="exportPage",outcome="${outcome}"}`
    const seen = async () => {
      const text = await (await metricsResponse()).text()
      return { ok: sample(text, series('ok')) ?? 0, error: sample(text, series('error')) ?? 0, sum: sample(text, series('ok').replace('_count{', '_sum{')) ?? 0 }
    }
    const before = await seen()
    const chunks = await chunksOf((after, first) => worker.chunk({ library: LIB, after, first, shape: shapeOf() }))
    const after = await seen()
    // Four chunks, three of them read ahead: each observed once, with the time its reads took.
    expect(chunks).toHaveLength(4)
    expect(after.ok - before.ok).toBe(4)
    expect(after.sum).toBeGreaterThan(before.sum)
    expect(after.error).toBe(before.error)
    // A read that fails in the Worker: a column it reads is gone.
    db.exec('ALTER TABLE things RENAME COLUMN url TO link_url')
    const quiet = captureLog()
    try {
      // Awaited here, not through expect().rejects, which left the Worker's reply unread while it waited.
      const failed = await worker.chunk({ library: LIB, after: 0, first: true, shape: shapeOf() }).then(() => undefined, (error: Error) => error)
      expect(failed?.message).toContain('no such column')
    } finally {
      quiet.restore()
    }
    expect((await seen()).error).toBe(before.error + 1)
  })

  it('reads a chunk again when the store was written since it read it ahead: a deleted record is not exported, a new one is', async () => {
    const { store } = await fileStore(250)
    const worker = workerOf(store)
    const shape = shapeOf()
    const first = await worker.chunk({ library: LIB, after: 0, first: true, shape })
    // Written after the Worker read the second chunk ahead, which it starts once it answered the
    // first: a write before that read would make the chunk ahead current, and rightly used (the
    // full test run on a loaded machine once saw that order).
    await Bun.sleep(100)
    await store.delete(LIB, 't000150', 1_700_009_999)
    await store.insertMany(LIB, [thing(999)])
    const second = await worker.chunk({ library: LIB, after: Number.parseInt(first.next!, 16), first: false, shape })
    const third = await worker.chunk({ library: LIB, after: Number.parseInt(second.next!, 16), first: false, shape })
    expect(second.ahead).toBe(false)
    expect(second.csv).not.toContain('t000150,')
    expect(second.csv).toContain('t000149,')
    expect(third.csv).toContain('t000999,')
    expect(third.next).toBeNull()
  })

  it('rejects with the reason when it cannot open the store, logs it once, and tries again only after a while', async () => {
    const { store } = await fileStore(5)
    const worker = createExportWorker({ ...store.exportFrom!, path: join(tmpdir(), 'lr-no-such-dir', 'none.sqlite') }, { store: 'things', retryMs: 300 })
    opened.push({ close: () => worker.close() })
    const request = { library: LIB, after: 0, first: true, shape: shapeOf() }
    const logged = captureLog()
    try {
      await expect(worker.chunk(request)).rejects.toThrow(/^export worker: .*unable to open database file/)
      expect(worker.active()).toBe(false)
      // A long export asks for a chunk every few milliseconds: no Worker started, no line logged for each.
      for (let i = 0; i < 5; i++) await expect(worker.chunk(request)).rejects.toThrow(/unable to open database file/)
      expect(logged.lines.map((line) => line.msg)).toEqual(['export worker could not start: exports are made on the service thread meanwhile'])
      await Bun.sleep(400)
      await expect(worker.chunk(request)).rejects.toThrow(/unable to open database file/)
      expect(logged.lines).toHaveLength(2)
    } finally {
      logged.restore()
    }
  })

  it('ends its Worker when idle and starts another for the next export', async () => {
    const { store } = await fileStore(150)
    const worker = workerOf(store, 50)
    const request = { library: LIB, after: 0, first: true, shape: shapeOf() }
    const before = await worker.chunk(request)
    expect(worker.active()).toBe(true)
    await Bun.sleep(300)
    expect(worker.active()).toBe(false)
    expect(await worker.chunk(request)).toEqual({ ...before, ahead: false })
    expect(worker.active()).toBe(true)
  })

  // The Worker is a VM with a heap of its own, which this thread's memoryUsage() leaves out.
  it('hands its heap to this thread\'s metrics with each chunk: lr_thread_heap_used_bytes{thread="export-things"}, summed into process_heap_used_bytes, gone once it ends', async () => {
    const { store } = await fileStore(150)
    const worker = workerOf(store, 50)
    const heap = async () => {
      const text = await (await metricsResponse()).text()
      return { export: sample(text, 'lr_thread_heap_used_bytes{thread="export-things"}'), main: sample(text, 'lr_thread_heap_used_bytes{thread="main"}')!, process: sample(text, 'process_heap_used_bytes')! }
    }
    await worker.chunk({ library: LIB, after: 0, first: true, shape: shapeOf() })
    const during = await heap()
    expect(during.export).toBeGreaterThan(100_000) // a VM with the SQLite reader and the CSV formatter loaded
    // Two readings of this thread's heap in one scrape: within a few hundred KiB of each other.
    expect(Math.abs(during.process - (during.main + during.export!))).toBeLessThan(512 * 1024)
    await Bun.sleep(300) // idle: the Worker ends
    expect(worker.active()).toBe(false)
    expect((await heap()).export).toBeUndefined()
  })

  it('lets a chunk in flight finish when closed, and refuses the next', async () => {
    const { store } = await fileStore(3000)
    const worker = workerOf(store)
    const request = { library: LIB, after: 0, first: true, shape: shapeOf({ limit: 3000 }) }
    const pending = worker.chunk(request)
    await worker.close()
    expect((await pending).csv.split('\r\n')).toHaveLength(3002)
    expect(worker.active()).toBe(false)
    await expect(worker.chunk(request)).rejects.toThrow('export worker closed')
    expect(worker.active()).toBe(false)
  })

  it('keeps two exports running at once apart: each gets its own rows', async () => {
    const { store } = await fileStore(250)
    await store.insertMany('team:b', Array.from({ length: 130 }, (_, n) => thing(5000 + n)))
    const worker = workerOf(store)
    const shape = shapeOf()
    const expected = async (library: string) => (await chunksOf((after, first) =>
      csvChunkOf(shape, (limit) => store.exportPage!(library, { limit, after: after === 0 ? undefined : after.toString(16) }), first))).map((c) => c.csv).join('')
    // One chunk of each in turn: each request finds the other export's chunk read ahead.
    let a: { after: number; first: boolean; csv: string; done: boolean } = { after: 0, first: true, csv: '', done: false }
    let b = { ...a }
    while (!a.done || !b.done) {
      for (const [library, state] of [[LIB, a], ['team:b', b]] as const) {
        if (state.done) continue
        const chunk = await worker.chunk({ library, after: state.after, first: state.first, shape })
        const advanced = { after: chunk.next === null ? state.after : Number.parseInt(chunk.next, 16), first: false, csv: state.csv + chunk.csv, done: chunk.next === null }
        if (library === LIB) a = advanced
        else b = advanced
      }
    }
    expect(a.csv).toBe(await expected(LIB))
    expect(b.csv).toBe(await expected('team:b'))
    expect(b.csv).toContain('t005129,')
    expect(b.csv).not.toContain('t000001,')
  })
})

describe('export worker modules', () => {
  it('loads only the SQLite reader and the CSV formatter: no contracts, logger, metrics or drivers twice', async () => {
    // What the Worker's VM loads is resident a second time in the process (export-worker.ts).
    const loaded = await modulesLoadedBy(join(import.meta.dir, '../src/export-worker.ts'), join(import.meta.dir, '..'))
    expect(loaded.some((path) => path.endsWith('export-worker.ts'))).toBe(true)
    expect(loaded.some((path) => path.includes('fast-csv'))).toBe(true)
    // fast-csv's cell formatter only: its index (the Transform stream and its helpers) is most of a Worker's start.
    expect(loaded.filter((path) => /fast-csv\/format\/build\/src\/(index|CsvFormatterStream)/.test(path))).toEqual([])
    expect(loaded.filter((path) => /typebox|pino|prom-client|elysia|nats|mongoose|proto\/src|platform\/src\/(?!csv-format|bulk-gc)/.test(path))).toEqual([])
  })
})
