/**
 * The targets of issue 14, in one place: each is a row of `bun run bench` against its same-run
 * baseline (a share of a bare server) or an absolute figure. BENCHMARKS.md shows which are met.
 */
export const TARGETS = {
  resolverOneProcess: { minShare: 0.6, maxP99Ms: 3 },
  resolverNats: { minShare: 0.4 },
  /** Scans/s from JetStream to the aggregates, none lost. */
  ingestScansPerS: 100_000,
  apiOneProcess: { list: 0.3, create: 0.2 },
  /** Batch of 50 creates, one connection, one process (p50, ms). */
  batchOneProcess: { maxP50Ms: 15 },
  apiNats: { list: 0.2, create: 0.15 },
  /** Static/dynamic CSV export. */
  recordExport: { rowsPerS: 300_000, maxRss: 120 * 1048576, maxGrowth: 1.1 },
  /** Per-scan CSV export of one code. */
  scanExport: { rowsPerS: 250_000, maxRss: 120 * 1048576 },
  /** Breakdown of a code with 1M scans: last 30 days, all time (ms, median of 20). */
  breakdownMs: { last30Days: 15, allTime: 50 },
} as const
