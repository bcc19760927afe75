import { FormatterOptions } from '@fast-csv/format'
import { FieldFormatter } from '@fast-csv/format/build/src/formatter/FieldFormatter'
import { bulkOutput } from './bulk-gc'
import { nextCursor } from './cursor'
import { type Page } from '@lr/proto'

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
// itself (130k against 280k rows/s measured on export records). Not re-exported by the package's
// index, hence the path; the version is pinned exactly in package.json.
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

/** Cells a kind computes from its record instead of reading a field (dynamic's short_url). */
export type DerivedCells<T> = { readonly [column: string]: (row: T) => unknown }

/**
 * Formats rows as RFC 4180 CSV with fast-csv's cell formatter: UTF-8, CRLF after every row (so
 * chunks can be concatenated), quotes only where needed, each cell through csvCell, columns in
 * the given order. With `header` the column names come first, also when there are no rows. A
 * column in `derived` is that function of the row, not the row's field of that name.
 */
export function formatCsv<T extends object>(columns: readonly string[], rows: readonly T[], opts: { header: boolean; derived?: DerivedCells<T> }): string {
  // Cells and rows gathered in one array and joined once: a string built by += is a rope of
  // some 20,000 pieces per chunk, and flattening it cost more than formatting the cells.
  const parts: string[] = []
  if (opts.header) parts.push(columns.map((column, i) => cellFormatter.format(column, i, true)).join(','), '\r\n')
  const derived = columns.map((column) => opts.derived?.[column])
  for (const row of rows) {
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) parts.push(',')
      const get = derived[i]
      const value = get === undefined ? (row as Record<string, unknown>)[columns[i]!] : get(row)
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

/**
 * Bytes of CSV one export chunk may carry at most (services lower it to half their bus's
 * maxPayload when that is smaller). A chunk travels as one bus message, and a row may be large
 * (a 2048-character URL, an 8 KiB style), so a fixed row count alone could not keep it under.
 */
export const CHUNK_MAX_BYTES = 512 * 1024

/**
 * One chunk of a streamed export: up to `limit` rows from `read` as CSV (header only in the
 * first) and where to go on. When the rows are too large for CHUNK_MAX_BYTES it reads half as
 * many, until they fit (a single row always does).
 */
export async function csvChunk<T extends object>(
  columns: readonly string[],
  read: (limit: number) => Promise<Page<T>>,
  limit: number,
  first: boolean,
  maxBytes = CHUNK_MAX_BYTES,
  derived?: DerivedCells<T>,
): Promise<{ csv: string; next_cursor: string | null }> {
  for (;;) {
    const page = await read(limit)
    const csv = formatCsv(columns, page.items, { header: first, derived })
    bulkOutput(csv.length)
    if (limit === 1 || Buffer.byteLength(csv) <= maxBytes) return { csv, next_cursor: nextCursor(page) }
    limit = Math.max(1, Math.floor(limit / 2))
  }
}
