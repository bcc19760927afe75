// The two classes by their own paths: the package's index also loads its Transform stream and
// lodash helpers, 20 ms of each export Worker's start against 2.6 ms (bench/ANALYSIS.md,
// "Twelfth session").
import { FormatterOptions } from '@fast-csv/format/build/src/FormatterOptions'
import { FieldFormatter } from '@fast-csv/format/build/src/formatter/FieldFormatter'
import type { Page } from '@lr/proto'
import { bulkOutput } from './bulk-gc'

/** A cell starting with one of these would be read as a formula by a spreadsheet. */
const FORMULA_START = /^[=+\-@\t\r]/

/** Prefixes a cell that would begin with = + - @ tab or CR with `'` (docs/decisions.md §7). */
export function neutraliseCell(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text
}

/**
 * The text of one CSV cell: null/undefined empty, a list of words (a record's tags, which hold no
 * space) its words separated by spaces, other objects their JSON text; then neutralised.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return neutraliseCell(value.join(' '))
  return neutraliseCell(typeof value === 'object' ? JSON.stringify(value) : String(value))
}

// fast-csv's own cell formatter (quotes a cell holding a comma, quote, CR or LF; doubles quotes),
// without its Transform stream: the stream machinery per chunk cost more than the formatting
// itself (130k against 280k rows/s measured on export records). Imported by path (above); the
// version is pinned exactly in package.json.
const cellFormatter = new FieldFormatter(new FormatterOptions({ rowDelimiter: '\r\n' }))
/** A cell the formatter would change (quote it, double its quotes, drop NULs); most cells have none. */
const NEEDS_FORMATTER = /[",\r\n\0]/

/** Any cell csvCell would neutralise or the formatter would change: one test for the common cell that needs neither. */
const SPECIAL = /^[=+\-@\t\r]|[",\r\n\0]/

// The last cell quoted and its quoted text: a kind's style cell (JSON, so always quoted) is most
// often the same text row after row.
let lastCell = ''
let lastQuoted = ''

/**
 * A neutralised cell as the formatter writes it. Without a NUL that is what fast-csv's formatter
 * does (RFC 4180: quoted when it holds a quote, comma, CR or LF, its quotes doubled), written out
 * here because the formatter's own steps (a regular-expression replace for NULs on every cell,
 * another for the quotes) were an eighth of a dynamic export's profile (measured against the
 * formatter in the same sitting: a few per cent more rows/s, 3-5 MiB lower peak); a cell with a
 * NUL goes to the formatter, which drops them. The test compares the two on random cells.
 */
function quoted(cell: string): string {
  if (!NEEDS_FORMATTER.test(cell)) return cell
  if (cell === lastCell) return lastQuoted
  lastQuoted = cell.includes('\0') ? cellFormatter.format(cell, 0, false) : `"${cell.includes('"') ? cell.replaceAll('"', '""') : cell}"`
  lastCell = cell
  return lastQuoted
}

/**
 * Cells a kind computes from its record instead of reading a field (dynamic's short_url: the
 * short base URL and the row's code). Data, not a function, so an export Worker can be told it.
 */
export type DerivedCells = { readonly [column: string]: { readonly prefix: string; readonly field: string } }

/**
 * Formats rows as RFC 4180 CSV with fast-csv's cell formatter: UTF-8, CRLF after every row (so
 * chunks can be concatenated), quotes only where needed, each cell through csvCell, columns in
 * the given order. With `header` the column names come first, also when there are no rows. A
 * column in `derived` is that function of the row, not the row's field of that name.
 */
export function formatCsv<T extends object>(columns: readonly string[], rows: readonly T[], opts: { header: boolean; derived?: DerivedCells }): string {
  // Cells and rows gathered in one array and joined once: a string built by += is a rope of
  // some 20,000 pieces per chunk, and flattening it cost more than formatting the cells.
  const parts: string[] = []
  if (opts.header) parts.push(columns.map((column, i) => cellFormatter.format(column, i, true)).join(','), '\r\n')
  const derived = columns.map((column) => opts.derived?.[column])
  for (const row of rows) {
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) parts.push(',')
      const cell = derived[i]
      const value = cell === undefined ? (row as Record<string, unknown>)[columns[i]!] : `${cell.prefix}${(row as Record<string, unknown>)[cell.field]}`
      // The usual cells first (an export is a million rows of them): a string or a number that
      // needs neither the neutralising nor the formatter is its own cell; an empty one (null, no
      // tags) adds nothing.
      if (typeof value === 'string') parts.push(SPECIAL.test(value) ? quoted(neutraliseCell(value)) : value)
      else if (typeof value === 'number' && value >= 0) parts.push(String(value))
      else if (value === null || value === undefined || (Array.isArray(value) && value.length === 0)) continue
      else parts.push(quoted(csvCell(value)))
    }
    parts.push('\r\n')
  }
  return parts.join('')
}

/** What one export chunk is cut from: its columns, derived cells, rows per chunk and byte bound. */
export interface ChunkShape {
  columns: readonly string[]
  derived?: DerivedCells
  /** Rows read at most. */
  limit: number
  /**
   * Rows the first read asks for, when an earlier chunk of the same export found that `limit` rows
   * are over `maxBytes` (its `rows`); `limit` when unset.
   */
  start?: number
  /** Bytes of CSV at most (UTF-8); a single row always goes. */
  maxBytes: number
  /**
   * Heap a row read takes besides its CSV text (the store's row object and any mapped copy),
   * counted with the CSV toward this thread's bulk collection (bulk-gc.ts). Default 0.
   */
  rowBytes?: number
}

/** A chunk: its CSV, the store position after it (null: the export is done), and the rows the next chunk should start reading. */
export interface CsvChunk {
  csv: string
  next: string | null
  rows: number
}

/**
 * One chunk of a streamed export: up to `shape.limit` rows from `read` as CSV (the header only
 * in the first) and the store position to go on from. When the rows are over `maxBytes` it reads
 * again as many as the bytes measured say fit, with a tenth to spare, until they fit (a single
 * row always does); `rows` hands that count to the next chunk, doubled (up to `limit`) when
 * these rows filled less than half the bytes. Halving instead, from `limit` at every chunk, read
 * and formatted a library of 10 KB rows six times per chunk: 12-31 s for 21 MB, and on NATS a
 * chunk past the request timeout. Every chunk made counts towards the thread's bulk collection
 * (bulk-gc.ts). Here, not in csv.ts, so an export Worker loads only this and fast-csv's
 * formatter (the contracts only as types, which loads nothing).
 */
export async function csvChunkOf<T extends object>(
  shape: ChunkShape,
  read: (limit: number) => Page<T> | Promise<Page<T>>,
  first: boolean,
): Promise<CsvChunk> {
  let limit = Math.max(1, Math.min(shape.limit, shape.start ?? shape.limit))
  for (;;) {
    const page = await read(limit)
    const csv = formatCsv(shape.columns, page.items, { header: first, derived: shape.derived })
    bulkOutput(csv.length + page.items.length * (shape.rowBytes ?? 0))
    const bytes = Buffer.byteLength(csv)
    if (limit === 1 || bytes <= shape.maxBytes) {
      const roomy = page.items.length === limit && bytes <= shape.maxBytes / 2
      return { csv, next: page.next, rows: roomy ? Math.min(shape.limit, limit * 2) : limit }
    }
    limit = Math.max(1, Math.min(limit - 1, Math.floor((page.items.length * shape.maxBytes * 0.9) / bytes)))
  }
}
