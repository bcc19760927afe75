import { describe, expect, it } from 'bun:test'
import { encodeCursor } from '@lr/platform/cursor'
import { alice, bob, event, failure, T0, visitor } from './fixtures'
import { setup } from './setup'

const HEADER = 'scan_id,code,scanned_at,country,device,os,browser,visitor_id\r\n'
const S0 = T0 / 1000

/** Every chunk of an export, as the gateway would request them. */
async function exportAll(service: ReturnType<typeof setup>['service'], code: string, query: Record<string, string> = {}) {
  const chunks = [await service.exportPage(alice, code, query, null)]
  while (chunks.at(-1)!.next_cursor) chunks.push(await service.exportPage(alice, code, query, chunks.at(-1)!.next_cursor))
  return chunks
}

describe('per-scan CSV export', () => {
  it('answers only the header row, with CRLF, for a code without scans', async () => {
    const { service } = setup()
    expect(await service.exportPage(alice, 'Code0001', {}, null)).toEqual({ csv: HEADER, next_cursor: null })
  })

  it('writes one row per scan in the contract\'s columns, time in epoch seconds', async () => {
    const { service } = setup()
    await service.ingest([event(1, { scanned_at: T0 + 999 }), event(2, { country: 'unknown', scanned_at: T0 + 1000 })])
    expect((await service.exportPage(alice, 'Code0001', {}, null)).csv).toBe(
      `${HEADER}evt-00001,Code0001,${S0},DE,mobile,iOS,Mobile Safari,${visitor(1)}\r\n` +
        `evt-00002,Code0001,${S0 + 1},unknown,mobile,iOS,Mobile Safari,${visitor(1)}\r\n`,
    )
  })

  it('splits a large export into chunks that hold each scan once, the header only in the first', async () => {
    const { service } = setup({ exportPageSize: 3 })
    await service.ingest(Array.from({ length: 7 }, (_, i) => event(i + 1, { scanned_at: T0 + i })))
    const chunks = await exportAll(service, 'Code0001')
    expect(chunks.map((c) => c.csv.split('\r\n').length - 1)).toEqual([4, 3, 1])
    const rows = chunks.map((c) => c.csv).join('').split('\r\n').slice(1, -1)
    expect(rows.map((row) => row.split(',')[0])).toEqual(['evt-00001', 'evt-00002', 'evt-00003', 'evt-00004', 'evt-00005', 'evt-00006', 'evt-00007'])
  })

  it('keeps only the scans of the days of from and to', async () => {
    const { service } = setup()
    await service.ingest([event(1, { scanned_at: T0 - 86_400_000 }), event(2)])
    expect((await service.exportPage(alice, 'Code0001', { from: '2025-01-10' }, null)).csv).toBe(
      `${HEADER}evt-00002,Code0001,${S0},DE,mobile,iOS,Mobile Safari,${visitor(1)}\r\n`,
    )
  })

  it('exports the history of a soft-deleted code of the library', async () => {
    const { service } = setup()
    await service.ingest([event(1, { code: 'Gone0001' })])
    expect((await service.exportPage(alice, 'Gone0001', {}, null)).csv.split('\r\n')).toHaveLength(3)
  })

  it('answers 404 for a code of another library', async () => {
    const { service } = setup()
    expect(await failure(service.exportPage(bob, 'Code0001', {}, null))).toEqual({ code: 'not_found', message: 'no dynamic QR code "Code0001" in this library' })
  })

  it('rejects a cursor it did not issue with 400', async () => {
    const { service } = setup()
    for (const cursor of ['!!', encodeCursor('abc'), encodeCursor('12:')])
      expect(await failure(service.exportPage(alice, 'Code0001', {}, cursor))).toEqual({ code: 'bad_request', message: 'cursor is not one this API issued' })
  })
})
