import { describe, expect, it } from 'bun:test'
import { csvChunk, csvCell, formatCsv, neutraliseCell } from '../src/csv'

describe('csv helpers', () => {
  it('prefixes a cell beginning with = + - @ tab or carriage return with a single quote', () => {
    expect(['=1', '+1', '-1', '@a', '\tx', '\rx'].map(neutraliseCell)).toEqual(["'=1", "'+1", "'-1", "'@a", "'\tx", "'\rx"])
  })

  it('leaves a cell alone when such a character is not at its start', () => {
    expect(['a=1', ' =1', "'=1", ''].map(neutraliseCell)).toEqual(['a=1', ' =1', "'=1", ''])
  })

  it('writes null and undefined as empty cells, objects as JSON and numbers as text', () => {
    expect([null, undefined, { a: [1] }, 0, 17].map(csvCell)).toEqual(['', '', '{"a":[1]}', '0', '17'])
  })

  it('quotes a tab- or CR-led cell after neutralising it', async () => {
    expect(await formatCsv(['a'], [{ a: '\rx' }, { a: '\tx' }], { header: false })).toBe(`"'\rx"\r\n'\tx\r\n`)
  })

  it('answers an empty string for no rows and no header, so a chunk adds nothing', async () => {
    expect(await formatCsv(['a', 'b'], [], { header: false })).toBe('')
  })

  it('writes the columns in the given order, not the object\'s', async () => {
    expect(await formatCsv(['b', 'a'], [{ a: 1, b: 2 }], { header: true })).toBe('b,a\r\n2,1\r\n')
  })

  it('turns a page into a chunk whose cursor encodes the page position', async () => {
    const chunk = await csvChunk(['a'], { items: [{ a: 'x' }], next: '1f' }, false)
    expect(chunk).toEqual({ csv: 'x\r\n', next_cursor: Buffer.from('1f').toString('base64url') })
  })
})
