import { format } from 'fast-csv'
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

/**
 * Formats rows as RFC 4180 CSV with fast-csv: UTF-8, CRLF after every row (so chunks can be
 * concatenated), quotes only where needed, each cell through csvCell, columns in the given order.
 * With `header` the column names come first, also when there are no rows.
 */
export function formatCsv<T extends object>(
  columns: readonly (keyof T & string)[],
  rows: readonly T[],
  opts: { header: boolean },
): Promise<string> {
  if (rows.length === 0 && !opts.header) return Promise.resolve('')
  return new Promise((resolve, reject) => {
    // Arrays without `headers`: fast-csv writes each row as given. Its formatter pushes
    // synchronously, so one stream per chunk costs little (measured faster than writeToString).
    const stream = format<string[], string[]>({ rowDelimiter: '\r\n', includeEndRowDelimiter: true })
    const parts: Buffer[] = []
    stream.on('data', (part: Buffer) => parts.push(part))
    stream.on('error', reject)
    stream.on('end', () => resolve(Buffer.concat(parts).toString('utf8')))
    if (opts.header) stream.write([...columns])
    for (const row of rows) stream.write(columns.map((column) => csvCell(row[column])))
    stream.end()
  })
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
  columns: readonly (keyof T & string)[],
  read: (limit: number) => Promise<Page<T>>,
  limit: number,
  first: boolean,
  maxBytes = CHUNK_MAX_BYTES,
): Promise<{ csv: string; next_cursor: string | null }> {
  for (;;) {
    const page = await read(limit)
    const csv = await formatCsv(columns, page.items, { header: first })
    if (limit === 1 || Buffer.byteLength(csv) <= maxBytes) return { csv, next_cursor: nextCursor(page) }
    limit = Math.max(1, Math.floor(limit / 2))
  }
}
