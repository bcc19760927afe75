import { describe, expect, it } from 'bun:test'
import { libraryOf } from '@lr/proto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createExportWorker } from '@lr/library-records'
import { describeEachExportMode } from '@lr/library-records/testing/export-modes'
import { decodeExportCursor } from '@lr/platform/cursor'
import { exportChunks } from '@lr/platform/metrics'
import { captureLog } from '@lr/platform/testing/log-capture'
import { STATIC_SQLITE } from '../src/adapters/record-store.sqlite'
import { badRequest, failure, otherPersonal, personal, setup as setupIn, T0, writer } from './fixtures'

const HEADER = 'qr_id,name,url,status,team_id,created_by,style,created_at,updated_at,tags\r\n'

/** Every chunk of an export, as the gateway would request them. */
async function exportAll(service: ReturnType<typeof setupIn>['service'], principal = personal) {
  const chunks = [await service.exportPage(principal, null)]
  while (chunks.at(-1)!.next_cursor) chunks.push(await service.exportPage(principal, chunks.at(-1)!.next_cursor))
  return chunks
}

// Each case once with the chunks made on the service's thread, once by its export Worker.
describeEachExportMode('CSV export', setupIn, (setup) => {
  it('answers only the header row, with CRLF, for an empty library', async () => {
    const { service } = setup()
    expect(await service.exportPage(personal, null)).toEqual({ csv: HEADER, next_cursor: null })
  })

  it('writes one CRLF-ended row per record, null as an empty cell and style as JSON text', async () => {
    const { service } = setup()
    const [mine] = (await service.create(personal, { url: 'https://example.com/a?x=1', name: 'Plain' })).created
    await service.create(otherPersonal, { url: 'https://example.com/b', name: 'Not mine' })
    expect((await service.exportPage(personal, null)).csv).toBe(
      `${HEADER}${mine!.qr_id},Plain,https://example.com/a?x=1,active,,acct_a,{},${T0},${T0},\r\n`,
    )
  })

  it('quotes cells holding commas, quotes or line breaks, doubling the quotes', async () => {
    const { service, store } = setup()
    const [r] = (await service.create(writer, { url: 'https://example.com/', name: 'Say "hi", then leave', style: { color: 'red' } })).created
    // A line break is refused in a name now (docs/decisions.md §3); one stored before still exports.
    await store.update(libraryOf(writer), r!.qr_id, { name: 'Say "hi", then\nleave' }, T0)
    expect((await service.exportPage(writer, null)).csv).toBe(
      `${HEADER}${r!.qr_id},"Say ""hi"", then\nleave",https://example.com/,draft,team_1,acct_w,"{""color"":""red""}",${T0},${T0},\r\n`,
    )
  })

  for (const start of ['=', '+', '-', '@']) {
    it(`prefixes a cell that begins with ${start} with a single quote`, async () => {
      const { service } = setup()
      const [r] = (await service.create(personal, { url: 'https://example.com/', name: `${start}HYPERLINK("http://evil")` })).created
      const row = (await service.exportPage(personal, null)).csv.slice(HEADER.length)
      expect(row).toBe(`${r!.qr_id},"'${start}HYPERLINK(""http://evil"")",https://example.com/,active,,acct_a,{},${T0},${T0},\r\n`)
    })
  }

  it('splits a large export into chunks that hold each record once, the header only in the first', async () => {
    const { service } = setup({ exportPageSize: 3 })
    const { created } = await service.batch(personal, { qrcodes: Array.from({ length: 7 }, (_, i) => ({ url: 'https://e.example/', name: `n${i}` })) })
    const chunks = await exportAll(service)
    expect(chunks.map((c) => c.csv.split('\r\n').length - 1)).toEqual([4, 3, 1])
    expect(chunks.slice(1).every((c) => !c.csv.includes('qr_id,name'))).toBe(true)
    const rows = chunks.map((c) => c.csv).join('').split('\r\n').slice(1, -1)
    expect(rows.map((row) => row.split(',')[0])).toEqual(created.map((r) => r.qr_id))
  })

  it('includes records created while the export is under way, exactly once', async () => {
    const { service } = setup({ exportPageSize: 2 })
    await service.batch(personal, { qrcodes: [1, 2, 3].map((n) => ({ url: 'https://e.example/', name: `old${n}` })) })
    const first = await service.exportPage(personal, null)
    await service.create(personal, { url: 'https://e.example/', name: 'new' })
    const second = await service.exportPage(personal, first.next_cursor)
    expect(second).toEqual({ csv: expect.stringMatching(/^qr_\S+,old3,.*\r\nqr_\S+,new,.*\r\n$/), next_cursor: null })
  })

  it('cuts large rows to the byte bound, every record once, and tells each next chunk the rows that fit', async () => {
    // Rows of about 2.3 KB against chunks of at most 10,000 bytes: 4 fit where 64 are asked for.
    const { service } = setup({ exportPageSize: 64, maxReplyBytes: 20_000 })
    const created = []
    for (let i = 0; i < 4; i++)
      created.push(...(await service.batch(personal, { qrcodes: Array.from({ length: 10 }, (_, j) => ({ url: `https://e.example/${'a'.repeat(2000)}?i=${i * 10 + j}`, name: `n${'b'.repeat(190)}${i * 10 + j}` })) })).created)
    const chunks = await exportAll(service)
    expect(chunks.every((c) => Buffer.byteLength(c.csv) <= 10_000)).toBe(true)
    const rows = chunks.map((c) => c.csv).join('').split('\r\n').slice(1, -1)
    expect(rows.map((row) => row.split(',')[0])).toEqual(created.map((r) => r.qr_id))
    const hinted = chunks.slice(0, -1).map((c) => decodeExportCursor(c.next_cursor!).rows)
    expect(hinted.every((rows) => rows !== undefined && rows >= 3 && rows <= 4)).toBe(true)
  })

  it('rejects a cursor it did not issue with 400', async () => {
    const { service } = setup()
    expect(await failure(service.exportPage(personal, '!!'))).toEqual(badRequest('cursor is not one this API issued'))
  })
})

describe('CSV export of large rows, on the service thread', () => {
  it('reads each chunk after the first once, from the rows the one before found to fit (halving from the limit read each six times)', async () => {
    const { service, store } = setupIn({ exportPageSize: 1000, maxReplyBytes: 40_000 })
    for (let i = 0; i < 3; i++)
      await service.batch(personal, { qrcodes: Array.from({ length: 50 }, (_, j) => ({ url: `https://e.example/${'a'.repeat(2000)}?i=${i * 50 + j}`, name: `n${i * 50 + j}` })) })
    const reads: number[] = []
    const exportPage = store.exportPage!.bind(store)
    store.exportPage = (library, page) => {
      reads.push(page.limit)
      return exportPage(library, page)
    }
    const chunks = await exportAll(service)
    expect(chunks.map((c) => c.csv).join('').split('\r\n').length - 2).toBe(150)
    // The first chunk: 1000 rows asked (150 come), then the rows 20,000 bytes hold; every other chunk reads once.
    expect(reads.length).toBe(chunks.length + 1)
    expect(reads.slice(1).every((limit) => limit === reads[1])).toBe(true)
  })
})

describe('CSV export when the export worker cannot make a chunk', () => {
  it('makes it on the service thread, logs why once, and counts where it was made', async () => {
    const broken = createExportWorker({ path: join(tmpdir(), 'lr-no-such-dir', 'records.sqlite'), kind: STATIC_SQLITE }, { store: 'records' })
    const { service } = setupIn({ exportWorker: broken })
    const [mine] = (await service.create(personal, { url: 'https://example.com/a', name: 'Plain' })).created
    const before = await madeOnThisThread()
    const logged = captureLog()
    try {
      expect((await service.exportPage(personal, null)).csv).toBe(`${HEADER}${mine!.qr_id},Plain,https://example.com/a,active,,acct_a,{},${T0},${T0},\r\n`)
    } finally {
      logged.restore()
      await broken.close()
    }
    expect(logged.lines).toEqual([expect.objectContaining({ msg: 'export worker could not start: exports are made on the service thread meanwhile', err: expect.objectContaining({ message: 'export worker: unable to open database file' }) })])
    expect(await madeOnThisThread()).toBe(before + 1)
  })
})

/** lr_export_chunks_total{kind="records",made="this_thread"} as /metrics has it. */
async function madeOnThisThread() {
  const metric = await exportChunks.get()
  return metric.values.find((v) => v.labels.kind === 'records' && v.labels.made === 'this_thread')?.value ?? 0
}
