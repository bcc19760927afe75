import { describe, expect, it, spyOn } from 'bun:test'
import { FormatterOptions } from '@fast-csv/format'
import { FieldFormatter } from '@fast-csv/format/build/src/formatter/FieldFormatter'
import { BULK_GC_BYTES, bulkOutput } from '@lr/platform/bulk-gc'
import { csvChunk, csvCell, csvChunkOf, formatCsv, neutraliseCell } from '@lr/platform/csv'

describe('csv helpers', () => {
  it('prefixes a cell beginning with = + - @ tab or carriage return with a single quote', () => {
    expect(['=1', '+1', '-1', '@a', '\tx', '\rx'].map(neutraliseCell)).toEqual(["'=1", "'+1", "'-1", "'@a", "'\tx", "'\rx"])
  })

  it('leaves a cell alone when such a character is not at its start', () => {
    expect(['a=1', ' =1', "'=1", ''].map(neutraliseCell)).toEqual(['a=1', ' =1', "'=1", ''])
  })

  it('writes null and undefined as empty cells, objects as JSON and numbers as text', () => {
    expect([null, undefined, { a: [1] }, 0, 17].map(csvCell)).toEqual(['', '', '{"a":[1]}', '0', '17'])
    expect([['print', 'q4'], [], ['-x'], [1, 2]].map(csvCell)).toEqual(['print q4', '', "'-x", '[1,2]'])
  })

  it('quotes a tab- or CR-led cell after neutralising it', async () => {
    expect(await formatCsv(['a'], [{ a: '\rx' }, { a: '\tx' }], { header: false })).toBe(`"'\rx"\r\n'\tx\r\n`)
  })

  it('quotes a cell holding a comma, a quote or a line break, doubling its quotes, and only those', () => {
    const rows = [{ a: 'x,y', b: 'say "hi"', c: 'one\ntwo', d: 'plain', e: 'n\0ul' }]
    expect(formatCsv(['a', 'b', 'c', 'd', 'e'], rows, { header: true })).toBe('a,b,c,d,e\r\n"x,y","say ""hi""","one\ntwo",plain,nul\r\n')
  })

  it("writes every cell as fast-csv's formatter writes its csvCell text (random cells, repeated ones too)", () => {
    const formatter = new FieldFormatter(new FormatterOptions({ rowDelimiter: '\r\n' }))
    // fast-csv also quotes a cell holding `|` (its pattern's character class); RFC 4180 does not ask for it, nor do we.
    const reference = (value: unknown) => {
      const cell = csvCell(value)
      return /[",\r\n\0]/.test(cell) ? formatter.format(cell, 0, false) : cell
    }
    const alphabet = ['a', 'Z', '7', ' ', '"', ',', '\r', '\n', '\0', '=', '+', '-', '@', '\t', "'", 'é', '😀']
    let seed = 7
    const random = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) % n)
    const text = () => Array.from({ length: random(8) }, () => alphabet[random(alphabet.length)]).join('')
    const values = Array.from({ length: 4000 }, (_, i): unknown => {
      switch (i % 7) {
        case 0: return { style: text() }
        case 1: return [text().replace(/\s/g, ''), 'tag']
        case 2: return random(3) === 0 ? null : random(2) === 0 ? undefined : []
        case 3: return random(2) === 0 ? -random(1000) : random(1000)
        default: return text()
      }
    })
    // Each value twice in a row and once more later: the formatter's memo of the last cell must not leak into the next.
    const rows = values.flatMap((value, i) => [{ v: value, w: values[(i * 31) % values.length] }, { v: value, w: value }])
    const expected = rows.map((row) => `${reference(row.v)},${reference(row.w)}\r\n`).join('')
    expect(formatCsv(['v', 'w'], rows, { header: false })).toBe(expected)
  })

  it('answers an empty string for no rows and no header, so a chunk adds nothing', async () => {
    expect(await formatCsv(['a', 'b'], [], { header: false })).toBe('')
  })

  it('writes a number as its text, neutralising a negative one as any other cell', () => {
    expect(formatCsv(['a', 'b', 'c', 'd'], [{ a: 0, b: 1_700_000_000_123, c: -5, d: Number.NaN }], { header: false })).toBe("0,1700000000123,'-5,NaN\r\n")
  })

  it('writes a derived column as its prefix and field, neutralised and quoted as any cell', () => {
    const derived = { link: { prefix: 'https://s.test/', field: 'id' }, formula: { prefix: '=', field: 'tail' } }
    const csv = formatCsv(['id', 'link', 'formula'], [{ id: 'a1', tail: 'a1,x' }, { id: 'b2', tail: 'b2,x' }], { header: true, derived })
    expect(csv).toBe(`id,link,formula\r\na1,https://s.test/a1,"'=a1,x"\r\nb2,https://s.test/b2,"'=b2,x"\r\n`)
  })

  it('writes the columns in the given order, not the object\'s', async () => {
    expect(await formatCsv(['b', 'a'], [{ a: 1, b: 2 }], { header: true })).toBe('b,a\r\n2,1\r\n')
  })

  it('turns a page into a chunk whose cursor encodes the page position', async () => {
    const chunk = await csvChunk({ columns: ['a'], limit: 10 }, async () => ({ items: [{ a: 'x' }], next: '1f' }), false)
    expect(chunk).toEqual({ csv: 'x\r\n', next_cursor: Buffer.from('1f').toString('base64url') })
  })

  describe('with rows too large for one chunk', () => {
    // 40 rows of 100 bytes; `next` is the position (index, hex) of a page's last row.
    const rows = Array.from({ length: 40 }, (_, i) => ({ n: String(i).padStart(2, '0'), big: 'x'.repeat(95) }))
    const reads: number[] = []
    const read = (after: number) => async (limit: number) => {
      reads.push(limit)
      const items = rows.slice(after, after + limit)
      const last = after + items.length
      return { items, next: last < rows.length ? (last - 1).toString(16) : null }
    }

    it('reads again as many rows as the measured bytes say fit, with a tenth to spare', async () => {
      reads.length = 0
      const chunk = await csvChunk({ columns: ['n', 'big'], limit: 32, maxBytes: 1000 }, read(0), false)
      expect(reads).toEqual([32, 9])
      expect(Buffer.byteLength(chunk.csv)).toBeLessThanOrEqual(1000)
      expect(chunk.csv.split('\r\n').filter(Boolean)).toHaveLength(9)
    })

    it('hands the rows that fit to the next chunk, which reads once (a probe: halving from the limit at every chunk read 10 KB rows six times a chunk)', async () => {
      reads.length = 0
      const seen: string[] = []
      let after = 0
      let start: number | undefined
      for (;;) {
        const chunk = await csvChunkOf({ columns: ['n', 'big'], limit: 32, start, maxBytes: 1000 }, read(after), false)
        const lines = chunk.csv.split('\r\n').filter(Boolean)
        seen.push(...lines.map((line) => line.slice(0, 2)))
        after += lines.length
        start = chunk.rows
        if (!chunk.next) break
      }
      expect(seen).toEqual(rows.map((row) => row.n))
      expect(reads).toEqual([32, 9, 9, 9, 9, 9])
    })

    it('reads twice as many rows next when a chunk filled less than half its bytes, up to the limit', async () => {
      const small = Array.from({ length: 100 }, (_, i) => ({ n: String(i) }))
      const readSmall = async (limit: number) => ({ items: small.slice(0, limit), next: '1' })
      expect((await csvChunkOf({ columns: ['n'], limit: 32, start: 4, maxBytes: 1000 }, readSmall, false)).rows).toBe(8)
      expect((await csvChunkOf({ columns: ['n'], limit: 32, start: 20, maxBytes: 1000 }, readSmall, false)).rows).toBe(32)
      expect((await csvChunkOf({ columns: ['n'], limit: 32, maxBytes: 1000 }, readSmall, false)).rows).toBe(32)
      // Full rows of a kind that fills over half the bytes: as many again.
      expect((await csvChunkOf({ columns: ['n', 'big'], limit: 32, start: 6, maxBytes: 1000 }, read(0), false)).rows).toBe(6)
    })

    it('returns every row exactly once across chunks', async () => {
      const seen: string[] = []
      let after = 0
      for (;;) {
        const chunk = await csvChunk({ columns: ['n', 'big'], limit: 32, maxBytes: 1000 }, read(after), false)
        const lines = chunk.csv.split('\r\n').filter(Boolean)
        seen.push(...lines.map((line) => line.slice(0, 2)))
        after += lines.length
        if (!chunk.next_cursor) break
      }
      expect(seen).toEqual(rows.map((row) => row.n))
    })

    it('sends a single row whatever its size', async () => {
      const chunk = await csvChunk({ columns: ['n', 'big'], limit: 4, maxBytes: 10 }, read(0), false)
      expect(chunk.csv.split('\r\n').filter(Boolean)).toHaveLength(1)
    })
  })
})

describe('the bulk collection of export chunks', () => {
  // Collections are counted through Bun.gc, the effect bulk-gc.ts exists for; the counting is
  // what is under test. The counter is the thread's: one full step first brings it to zero.
  const collectionsDuring = async (work: () => Promise<unknown>) => {
    bulkOutput(BULK_GC_BYTES)
    const gc = spyOn(Bun, 'gc').mockImplementation(() => 0)
    try {
      await work()
      return gc.mock.calls.length
    } finally {
      gc.mockRestore()
    }
  }
  const rows = Array.from({ length: 1000 }, (_, i) => ({ id: String(i) }))
  const chunk = (rowBytes?: number) => csvChunkOf({ columns: ['id'], limit: 1000, maxBytes: 1 << 20, rowBytes }, () => ({ items: rows, next: null }), false)

  it('counts a chunk by its CSV alone unless its rows weigh more', async () => {
    // About 4.9 KB of CSV a chunk: far from BULK_GC_BYTES in ten chunks.
    expect(await collectionsDuring(async () => { for (let i = 0; i < 10; i++) await chunk() })).toBe(0)
  })

  it('counts rowBytes for every row read, so an export of heavier rows is collected sooner', async () => {
    // 1000 rows of BULK_GC_BYTES / 2000 bytes: a collection every second chunk.
    expect(await collectionsDuring(async () => { for (let i = 0; i < 10; i++) await chunk(BULK_GC_BYTES / 2000) })).toBe(5)
  })
})
