/**
 * Counters and histograms for the paths every request takes (HTTP answers, bus rounds, store
 * operations), kept as plain numbers per label set and handed to prom-client's registry as it
 * scrapes, in the same text its own Counter and Histogram write.
 *
 * Why: prom-client checks, hashes into a string and looks up the labels on every update, and a
 * histogram searches its bucket through a map of bounds; a counter and a histogram update cost
 * the resolver about 2 µs of its ~15 µs per redirect (bench/ANALYSIS.md, "Ninth session"). Here a
 * caller that keeps a series (`labels(...)`) updates it with arithmetic, and one that passes
 * labels each time pays one lookup by their values. Labels are the metric's `labelNames`, in
 * that order; their values are bounded by the callers (routes are patterns, never paths).
 */
type Labels<L extends string> = { [K in L]: string }

interface Series<L extends string> {
  labels: Labels<L>
  value: number
}

interface HistogramSeries<L extends string> {
  labels: Labels<L>
  /** Observations per bucket (not cumulative), the last one past every bound. */
  counts: Float64Array
  sum: number
  count: number
}

/** The registry's view of one line (prom-client's own shape: `labels` first, then `sharedLabels`). */
interface Line {
  labels: Record<string, string | number>
  sharedLabels: Record<string, string>
  value: number
  metricName: string
}

/**
 * One thread's tallies since its last snapshot, as plain data (a Worker posts it to the thread
 * whose registry is scraped): per tally name, each series' labels and what it added.
 */
export type TallySnapshot = Record<string, { labels: Record<string, string>; value?: number; counts?: number[]; sum?: number; count?: number }[]>

/** Every tally of this thread by name: what takeTallies reads and addTallies adds to. */
const tallies = new Map<string, Tally<string, { labels: Labels<string> }>>()

/** What scrapes the tallies: prom-client's registry (the Registry interface it uses). */
interface Registry {
  registerMetric(metric: never): void
}
let registry: Registry | undefined

/**
 * Registers every tally, and each one made later, with `scraped` (./metrics.ts gives prom-client's
 * default registry), but those not `scrapedEverywhere`, which their owner registers. This file does not load prom-client itself: a resolver thread keeps tallies
 * that its main thread scrapes, and every module a thread loads is resident in its own heap.
 */
export function scrapeTalliesWith(scraped: Registry): void {
  registry = scraped
  for (const tally of tallies.values()) if (tally.scrapedEverywhere) scraped.registerMetric(tally as never)
}

/** What this thread's tallies counted since the last call; their series start again from zero. */
export function takeTallies(): TallySnapshot {
  const snapshot: TallySnapshot = {}
  for (const [name, tally] of tallies) {
    const taken = tally.take()
    if (taken.length > 0) snapshot[name] = taken
  }
  return snapshot
}

/** Adds another thread's snapshot to this thread's tallies (a name it does not know is skipped). */
export function addTallies(snapshot: TallySnapshot): void {
  for (const [name, series] of Object.entries(snapshot)) {
    const tally = tallies.get(name)
    if (tally) for (const one of series) tally.add(one)
  }
}

abstract class Tally<L extends string, S extends { labels: Labels<L> }> {
  protected readonly series = new Set<S>()

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    /** false: scraped only once the code it belongs to registers it (metrics.ts, reportMetrics). */
    readonly scrapedEverywhere = true,
  ) {
    tallies.set(name, this as never)
    if (scrapedEverywhere) registry?.registerMetric(this as never)
  }

  /** The series that counted anything since the last call, as data; each is zeroed (its handles stay valid). */
  abstract take(): TallySnapshot[string]
  /** Adds one series of another thread's snapshot. */
  abstract add(taken: TallySnapshot[string][number]): void

  /** The series again, by each label's value in turn: a lookup builds no key string. */
  private readonly byValue = new Map<string, unknown>()

  /** The series of these label values, made on first use. */
  protected seriesOf(labels: Labels<L>): S {
    const names = this.labelNames
    let level = this.byValue
    for (let i = 0; i < names.length - 1; i++) {
      const value = labels[names[i]!]
      const key = typeof value === 'string' ? value : String(value)
      let next = level.get(key) as Map<string, unknown> | undefined
      if (!next) level.set(key, (next = new Map()))
      level = next
    }
    const value = names.length === 0 ? '' : labels[names[names.length - 1]!]
    const key = typeof value === 'string' ? value : String(value)
    let series = level.get(key) as S | undefined
    if (!series) {
      // A copy: the caller may reuse its object for other values.
      const own = {} as Labels<L>
      for (const name of this.labelNames) own[name] = String(labels[name])
      series = this.made(own)
      level.set(key, series)
      this.series.add(series)
    }
    return series
  }

  protected abstract made(labels: Labels<L>): S
  abstract readonly type: string
  protected abstract lines(): Line[]

  /** What the registry writes (prom-client's Registry reads this before `get`). */
  async getForPromString() {
    return { name: this.name, help: this.help, type: this.type, values: this.lines(), aggregator: 'sum' }
  }

  /** The JSON form (Registry.getMetricsAsJSON): each line's labels in one object. */
  async get() {
    const data = await this.getForPromString()
    return { ...data, values: data.values.map(({ labels, sharedLabels, value, metricName }) => ({ labels: { ...labels, ...sharedLabels }, value, metricName })) }
  }

  reset(): void {
    this.series.clear()
    this.byValue.clear()
  }
}

/** A counter (`lr_..._total`) with labels. */
export class TallyCounter<L extends string> extends Tally<L, Series<L>> {
  readonly type = 'counter'

  protected made(labels: Labels<L>): Series<L> {
    return { labels, value: 0 }
  }

  inc(labels: Labels<L>, by = 1): void {
    this.seriesOf(labels).value += by
  }

  /** One series to count into without a lookup. */
  labels(labels: Labels<L>): { inc(by?: number): void } {
    const series = this.seriesOf(labels)
    return { inc: (by = 1) => void (series.value += by) }
  }

  protected lines(): Line[] {
    return [...this.series.values()].map((series) => ({ labels: {}, sharedLabels: series.labels, value: series.value, metricName: this.name }))
  }

  take(): TallySnapshot[string] {
    const taken: TallySnapshot[string] = []
    for (const series of this.series.values()) {
      if (series.value === 0) continue
      taken.push({ labels: series.labels, value: series.value })
      series.value = 0
    }
    return taken
  }

  add(taken: TallySnapshot[string][number]): void {
    this.seriesOf(taken.labels as Labels<L>).value += taken.value ?? 0
  }
}

/** A histogram with labels: `_bucket` lines (cumulative, `le`), `_sum`, `_count`. */
export class TallyHistogram<L extends string> extends Tally<L, HistogramSeries<L>> {
  readonly type = 'histogram'

  constructor(name: string, help: string, labelNames: readonly L[], private readonly bounds: readonly number[]) {
    super(name, help, labelNames)
  }

  protected made(labels: Labels<L>): HistogramSeries<L> {
    return { labels, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 }
  }

  private record(series: HistogramSeries<L>, value: number): void {
    const { bounds } = this
    let i = 0
    while (i < bounds.length && value > bounds[i]!) i++
    series.counts[i]!++
    series.sum += value
    series.count++
  }

  observe(labels: Labels<L>, value: number): void {
    this.record(this.seriesOf(labels), value)
  }

  /** One series to observe into without a lookup. */
  labels(labels: Labels<L>): { observe(value: number): void } {
    const series = this.seriesOf(labels)
    return { observe: (value) => this.record(series, value) }
  }

  take(): TallySnapshot[string] {
    const taken: TallySnapshot[string] = []
    for (const series of this.series.values()) {
      if (series.count === 0) continue
      taken.push({ labels: series.labels, counts: [...series.counts], sum: series.sum, count: series.count })
      series.counts.fill(0)
      series.sum = 0
      series.count = 0
    }
    return taken
  }

  add(taken: TallySnapshot[string][number]): void {
    const series = this.seriesOf(taken.labels as Labels<L>)
    taken.counts?.forEach((n, i) => i < series.counts.length && (series.counts[i]! += n))
    series.sum += taken.sum ?? 0
    series.count += taken.count ?? 0
  }

  protected lines(): Line[] {
    const bucket = `${this.name}_bucket`
    const lines: Line[] = []
    for (const series of this.series.values()) {
      let below = 0
      this.bounds.forEach((le, i) => {
        below += series.counts[i]!
        lines.push({ labels: { le }, sharedLabels: series.labels, value: below, metricName: bucket })
      })
      lines.push(
        { labels: { le: '+Inf' }, sharedLabels: series.labels, value: series.count, metricName: bucket },
        { labels: {}, sharedLabels: series.labels, value: series.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: series.labels, value: series.count, metricName: `${this.name}_count` },
      )
    }
    return lines
  }
}
