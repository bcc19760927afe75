import { nextCursor } from './cursor'
import { type Page } from '@lr/proto'
import { type ChunkShape, csvChunkOf } from './csv-format'

export { type ChunkShape, csvCell, csvChunkOf, type DerivedCells, formatCsv, neutraliseCell } from './csv-format'

/**
 * Bytes of CSV one export chunk may carry at most (services lower it to half their bus's
 * maxPayload when that is smaller). A chunk travels as one bus message, and a row may be large
 * (a 2048-character URL, an 8 KiB style), so a fixed row count alone could not keep it under.
 */
export const CHUNK_MAX_BYTES = 512 * 1024

/**
 * One chunk of a streamed export (csvChunkOf) with its next position as an internal cursor
 * (encodeCursor), as the gateway loops over them.
 */
export async function csvChunk<T extends object>(
  shape: Omit<ChunkShape, 'maxBytes'> & { maxBytes?: number },
  read: (limit: number) => Promise<Page<T>>,
  first: boolean,
): Promise<{ csv: string; next_cursor: string | null }> {
  const chunk = await csvChunkOf({ maxBytes: CHUNK_MAX_BYTES, ...shape }, read, first)
  return { csv: chunk.csv, next_cursor: nextCursor(chunk) }
}
