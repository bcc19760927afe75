/** Settings of one bench run, from the environment (documented in bench/README.md). */
const env = Bun.env
const quick = env.BENCH_QUICK === '1'
const num = (name: string, fallback: number) => {
  const value = env[name]
  if (value === undefined || value === '') return fallback
  const parsed = Number(value)
  if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`${name}=${value}: a positive number is needed`)
  return parsed
}

export const settings = {
  quick,
  /** Seconds of each measured wrk run. */
  seconds: num('BENCH_SECONDS', quick ? 3 : 8),
  /** Seconds of the warm-up run before each measured one (its figures are thrown away). */
  warmup: num('BENCH_WARMUP', quick ? 1 : 2),
  /** Connections of the throughput runs (scenarios 1-3). */
  connections: num('BENCH_CONNECTIONS', 64),
  /** Scenario 8: how long NATS is away while the resolver serves at full rate. */
  outageSeconds: num('BENCH_OUTAGE', quick ? 10 : 60),
  /** Row counts of the static/dynamic CSV export runs (scenario 5). */
  exportSizes: quick ? [10_000, 50_000] : [100_000, 1_000_000],
  /** Scans of one code for the scan export (5) and the breakdown (7). */
  scans: num('BENCH_SCANS', quick ? 50_000 : 1_000_000),
  /**
   * Scans published to JetStream for the ingestion run (6): a sustained rate, so about 7 s of it.
   * It was 200,000 (2 s), largely warm-up: the publisher is a fresh process, and it published at
   * 101-153k/s there against 150-209k/s over 1,000,000 (bench/ANALYSIS.md, fourteenth session).
   */
  ingest: num('BENCH_INGEST', quick ? 20_000 : 1_000_000),
  /** Only these scenarios (comma-separated numbers), e.g. BENCH_ONLY=1,3. */
  only: env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',').map((s) => s.trim())) : null,
  /** Where BENCHMARKS.md is written; BENCH_OUT=- writes nothing. */
  out: env.BENCH_OUT ?? null,
}

export type Settings = typeof settings
