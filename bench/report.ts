/** One line of the results table. */
export interface Row {
  scenario: string
  metric: string
  product: string
  /** The baseline figure measured in the same run, or the target itself when the target is absolute. */
  baseline: string
  ratio: string
  target: string
  verdict: 'pass' | 'miss' | 'info' | 'error'
  /** Scenario number, for ordering. */
  order: number
}

export const fmt = {
  rps: (n: number) => `${Math.round(n).toLocaleString('en-US')}/s`,
  ms: (n: number) => (n < 1 ? `${(n * 1000).toFixed(0)} µs` : n < 10 ? `${n.toFixed(2)} ms` : `${n.toFixed(1)} ms`),
  mb: (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`,
  int: (n: number) => Math.round(n).toLocaleString('en-US'),
  pct: (r: number) => `${(r * 100).toFixed(0)}%`,
  x: (r: number) => `${r.toFixed(2)}×`,
  s: (n: number) => `${n.toFixed(1)} s`,
}

type Base = Pick<Row, 'scenario' | 'metric' | 'order'>

/** Product throughput against a baseline's; pass when the share reaches `min` (a fraction), or info without one. */
export function shareRow(base: Base, product: number, baseline: number, baselineName: string, min?: number, unit = fmt.rps): Row {
  const ratio = product / baseline
  return {
    ...base,
    product: unit(product),
    baseline: `${unit(baseline)} (${baselineName})`,
    ratio: fmt.pct(ratio),
    target: min === undefined ? '—' : `≥ ${fmt.pct(min)} of baseline`,
    verdict: min === undefined ? 'info' : ratio >= min ? 'pass' : 'miss',
  }
}

/** A figure against a ceiling (latency, memory): the target is the baseline; ratio = figure / ceiling. */
export function ceilingRow(base: Base, value: number, limit: number | undefined, unit: (n: number) => string, baselineNote?: string): Row {
  return {
    ...base,
    product: unit(value),
    baseline: limit === undefined ? (baselineNote ?? '—') : baselineNote ?? `${unit(limit)} (target)`,
    ratio: limit === undefined ? '—' : fmt.x(value / limit),
    target: limit === undefined ? '—' : `≤ ${unit(limit)}`,
    verdict: limit === undefined ? 'info' : value <= limit ? 'pass' : 'miss',
  }
}

/** A figure against a floor (rows/s, scans/s): the target is the baseline; ratio = figure / floor. */
export function floorRow(base: Base, value: number, floor: number | undefined, unit: (n: number) => string, baselineNote?: string): Row {
  return {
    ...base,
    product: unit(value),
    baseline: floor === undefined ? (baselineNote ?? '—') : baselineNote ?? `${unit(floor)} (target)`,
    ratio: floor === undefined ? '—' : fmt.x(value / floor),
    target: floor === undefined ? '—' : `≥ ${unit(floor)}`,
    verdict: floor === undefined ? 'info' : value >= floor ? 'pass' : 'miss',
  }
}

/** Counted against expected: pass when nothing is missing (with an allowed surplus, e.g. wrk's in-flight requests). */
export function countRow(base: Base, counted: number, expected: number, what: string, surplus = 0): Row {
  const ok = counted >= expected && counted <= expected + surplus
  return {
    ...base,
    product: `${fmt.int(counted)} counted`,
    baseline: `${fmt.int(expected)} ${what}`,
    ratio: expected === 0 ? '—' : `${((counted / expected) * 100).toFixed(2)}%`,
    target: surplus ? `lost = 0 (≤ +${surplus} in flight)` : 'lost = 0',
    verdict: ok ? 'pass' : 'miss',
  }
}

export function errorRow(base: Base, error: unknown): Row {
  const message = String((error as Error)?.message ?? error).split('\n')[0]!.slice(0, 160)
  return { ...base, product: 'error', baseline: '—', ratio: '—', target: message, verdict: 'error' }
}

const COLUMNS: [keyof Row, string][] = [
  ['scenario', 'scenario'], ['metric', 'metric'], ['product', 'product'], ['baseline', 'baseline (same run)'],
  ['ratio', 'ratio'], ['target', 'target'], ['verdict', 'result'],
]

/** The table as fixed-width text for the terminal. */
export function textTable(rows: Row[]): string {
  const widths = COLUMNS.map(([key, title]) => Math.max(title.length, ...rows.map((row) => String(row[key]).length)))
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')
  return [line(COLUMNS.map(([, title]) => title)), widths.map((w) => '-'.repeat(w)).join('-+-'), ...rows.map((row) => line(COLUMNS.map(([key]) => String(row[key]))))].join('\n')
}

/** The table as Markdown. */
export function markdownTable(rows: Row[]): string {
  const cell = (s: string) => s.replaceAll('|', '\\|')
  const verdict = (v: Row['verdict']) => (v === 'pass' ? 'pass' : v === 'miss' ? '**miss**' : v === 'error' ? '**error**' : 'info')
  return [
    `| ${COLUMNS.map(([, t]) => t).join(' | ')} |`,
    `|${COLUMNS.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${COLUMNS.map(([key]) => (key === 'verdict' ? verdict(row.verdict) : cell(String(row[key])))).join(' | ')} |`),
  ].join('\n')
}
