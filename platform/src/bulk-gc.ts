/**
 * Bytes of bulk output (CSV export chunks) after which this thread runs a full collection.
 *
 * Why: an export chunk is a few hundred KiB of strings and buffers, made and dropped several
 * times over (rows, cells, the chunk, the bus's JSON copy, the response bytes), and JSC frees
 * them only at its next collection, which its heuristics put off while the heap grows: a 1M-row
 * export peaked at 270 MB RSS against 180 MB for 100k rows, i.e. with the row count
 * (bench/ANALYSIS.md, "Sixth session"). An asynchronous `Bun.gc(false)` or an eden collection
 * left the peak where it was or raised it; a synchronous full one after every few MiB holds it
 * at what one such stretch allocates, whatever the row count. Measured cost (1M-row export on
 * 2 cores): 9 ms of this thread per collection at the median, 15 ms at most, one per ~27,000
 * record rows (twice as often in one process, where two count each chunk), a fifth of the
 * export's time: a pause other requests on this thread share while an export runs. The size
 * trades that time against the peak (one process, 1M rows, static / dynamic; bench/ANALYSIS.md,
 * "Seventh session"): 5 MiB, dynamic 291-298k rows/s at 110 MiB; 6 MiB 347k / 305-311k at
 * 111 / 114 MiB; 8 MiB (measured before the gateway sent chunks as strings) 120 MiB.
 */
export const BULK_GC_BYTES = 6 * 1024 * 1024

let produced = 0

/**
 * Counts `bytes` of bulk output made on this thread (UTF-16 units of a string are close enough)
 * and collects once their sum passes BULK_GC_BYTES. One counter per thread: in one process the
 * service that formats a chunk and the gateway that streams it both count it, as both allocate
 * copies of it.
 */
export function bulkOutput(bytes: number): void {
  produced += bytes
  if (produced < BULK_GC_BYTES) return
  produced = 0
  Bun.gc(true)
}
