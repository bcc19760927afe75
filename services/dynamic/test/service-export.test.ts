import { describe, expect, it } from 'bun:test'
import { describeEachExportMode } from '@lr/library-records/testing/export-modes'
import { badRequest, failure, otherPersonal, personal, setup as setupIn, SHORT, T0, writer } from './fixtures'

const HEADER = 'code,short_url,destination_url,name,status,team_id,created_by,style,created_at,updated_at,tags\r\n'

// Each case once with the chunks made on the service's thread, once by its export Worker.
describeEachExportMode('CSV export', setupIn, (setup) => {
  it('answers only the header row, with CRLF, for an empty library', async () => {
    const { service } = setup()
    expect(await service.exportPage(personal, null)).toEqual({ csv: HEADER, next_cursor: null })
  })

  it('writes one CRLF-ended row per live code with its short_url, null as an empty cell and style as JSON text', async () => {
    const { service } = setup()
    const [mine] = (await service.create(personal, { destination_url: 'https://example.com/a?x=1', name: 'Plain' })).created
    const [deleted] = (await service.create(personal, { destination_url: 'https://example.com/d', name: 'Deleted' })).created
    await service.delete(personal, deleted!.code)
    await service.create(otherPersonal, { destination_url: 'https://example.com/b', name: 'Not mine' })
    expect((await service.exportPage(personal, null)).csv).toBe(
      `${HEADER}${mine!.code},${SHORT}/${mine!.code},https://example.com/a?x=1,Plain,active,,acct_a,{},${T0},${T0},\r\n`,
    )
  })

  it('writes tags as words separated by spaces, and leaves out the fields only the API answers carry', async () => {
    const { service } = setup()
    const [r] = (await service.create(personal, {
      destination_url: 'https://example.com/t', name: 'Tagged', tags: ['print', 'q4'], redirect_rules: [{ os: 'ios', destination_url: 'https://apps.example/ios' }],
    })).created
    expect((await service.exportPage(personal, null)).csv).toBe(
      `${HEADER}${r!.code},${SHORT}/${r!.code},https://example.com/t,Tagged,active,,acct_a,{},${T0},${T0},print q4\r\n`,
    )
  })

  it('quotes cells holding commas or quotes and neutralises a formula', async () => {
    const { service } = setup()
    const [r] = (await service.create(writer, { destination_url: 'https://example.com/', name: '=SUM(1,2) "x"', style: { c: 'red' } })).created
    expect((await service.exportPage(writer, null)).csv).toBe(
      `${HEADER}${r!.code},${SHORT}/${r!.code},https://example.com/,"'=SUM(1,2) ""x""",draft,team_1,acct_w,"{""c"":""red""}",${T0},${T0},\r\n`,
    )
  })

  it('splits a large export into chunks that hold each code once, the header only in the first', async () => {
    const { service } = setup({ exportPageSize: 3 })
    const { created } = await service.batch(personal, Array.from({ length: 7 }, (_, i) => ({ destination_url: 'https://e.example/', name: `n${i}` })))
    const chunks = [await service.exportPage(personal, null)]
    while (chunks.at(-1)!.next_cursor) chunks.push(await service.exportPage(personal, chunks.at(-1)!.next_cursor))
    expect(chunks.map((c) => c.csv.split('\r\n').length - 1)).toEqual([4, 3, 1])
    const rows = chunks.map((c) => c.csv).join('').split('\r\n').slice(1, -1)
    expect(rows.map((row) => row.split(',')[0])).toEqual(created.map((r) => r.code))
  })

  it('rejects a cursor it did not issue with 400', async () => {
    const { service } = setup()
    expect(await failure(service.exportPage(personal, '!!'))).toEqual(badRequest('cursor is not one this API issued'))
  })
})
