// `bun run bench`: every scenario of the benchmark issue, each figure beside a baseline measured
// in the same run on this machine; prints the table and writes BENCHMARKS.md. See bench/README.md.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describeMachine, machineQuiet, type Machine } from './machine'
import { ROOT } from './procs'
import { startNatsProduct, startOneProcess, type Product } from './product'
import { errorRow, markdownTable, type Row, textTable } from './report'
import { settings } from './settings'
import { ensureWrk } from './wrk'
import { TARGETS } from './targets'
import { apiFixture } from './scenarios/api-fixture'
import { apiReadCreateScenario } from './scenarios/api-read-create'
import { batchCreateScenario } from './scenarios/batch-create'
import { exportScenario } from './scenarios/export'
import { outageScenario } from './scenarios/outage'
import { resolverScenario } from './scenarios/resolver'
import { countScans, ingestScenario, relayTrail, seededScansScenario } from './scenarios/scans'

const rows: Row[] = []
const startedAt = performance.now()
const elapsed = () => `${((performance.now() - startedAt) / 1000).toFixed(0)} s`
const log = (line: string) => console.log(`[bench ${elapsed()}] ${line}`)
const wanted = (...scenarios: number[]) => !settings.only || scenarios.some((n) => settings.only!.has(String(n)))

/** Runs one scenario; a failure becomes an error row (and its output), never the end of the run. */
async function attempt(order: number, scenario: string, body: () => Promise<Row[]>, product?: Product) {
  const busy = await machineQuiet()
  log(`scenario ${scenario} (machine ${(busy * 100).toFixed(0)} % busy before it)`)
  try {
    const got = await body()
    rows.push(...got)
    console.log(textTable(got))
  } catch (error) {
    console.error(`[bench] scenario ${scenario} failed:`, error)
    if (product) console.error(product.output().slice(-4000))
    rows.push(errorRow({ scenario, metric: 'run', order }, error))
  }
}

/** Starts a deployment for a group of scenarios and always stops it. */
async function withProduct(start: () => Promise<Product>, what: string, body: (product: Product) => Promise<void>) {
  log(`starting ${what}`)
  let product: Product
  try {
    product = await start()
  } catch (error) {
    console.error(`[bench] ${what} did not start:`, error)
    rows.push(errorRow({ scenario: what, metric: 'start', order: 0 }, error))
    return
  }
  try {
    await body(product)
  } finally {
    await product.stop()
  }
}

async function apiScenarios(product: Product, oneProcess: boolean) {
  if (!wanted(3, 4)) return
  let fixture: Awaited<ReturnType<typeof apiFixture>>
  try {
    fixture = await apiFixture(product)
  } catch (error) {
    console.error(`[bench] API fixture on ${product.mode} failed:`, error)
    rows.push(errorRow({ scenario: `3/4 API, ${product.mode}`, metric: 'fixture', order: 3 }, error))
    return
  }
  try {
    if (wanted(3)) await attempt(3, `3 API, ${product.mode}`, () => apiReadCreateScenario(product, fixture, settings, oneProcess ? TARGETS.apiOneProcess : TARGETS.apiNats), product)
    if (wanted(4)) await attempt(4, `4 batch of 50, ${product.mode}`, () => batchCreateScenario(product, fixture, settings, oneProcess ? TARGETS.batchOneProcess.maxP50Ms : undefined), product)
  } finally {
    await fixture.stop()
  }
}

await ensureWrk()
const machine = await describeMachine()
log(`${machine.cpu}, ${machine.cores} cores, ${machine.memory}; Bun ${machine.bun}; ${settings.quick ? 'QUICK run' : 'full run'}, ${settings.seconds} s per wrk run`)

if (wanted(1, 3, 4))
  await withProduct(() => startOneProcess(), 'one-process product', async (product) => {
    if (wanted(1))
      await attempt(1, '1 resolver, one process', () => resolverScenario(product, settings, { order: 1, scenario: '1 resolver, one process', ...TARGETS.resolverOneProcess, countScans }), product)
    await apiScenarios(product, true)
  })

if (wanted(2, 3, 4, 6, 8))
  await withProduct(() => startNatsProduct(), 'NATS deployment', async (product) => {
    if (wanted(2))
      await attempt(2, '2 resolver, NATS', () => resolverScenario(product, settings, { order: 2, scenario: '2 resolver, NATS', ...TARGETS.resolverNats, countScans, relayTrail }), product)
    await apiScenarios(product, false)
    if (wanted(6)) await attempt(6, '6 scan ingestion, JetStream', () => ingestScenario(product, settings), product)
    // Last: it stops and restarts the broker under the whole deployment.
    if (wanted(8)) await attempt(8, '8 resolver through a NATS outage', () => outageScenario(product, settings), product)
  })

if (wanted(5)) await attempt(5, '5 CSV export, one process', () => exportScenario(settings.exportSizes, log))
if (wanted(5, 7)) await attempt(7, '5/7 scans of one code, one process', () => seededScansScenario(settings, log))

const totalSeconds = (performance.now() - startedAt) / 1000
rows.sort((a, b) => a.order - b.order)
console.log(`\n${textTable(rows)}\n`)
const misses = rows.filter((r) => r.verdict === 'miss' || r.verdict === 'error')
log(`done in ${(totalSeconds / 60).toFixed(1)} min: ${rows.filter((r) => r.verdict === 'pass').length} pass, ${misses.length} miss/error`)

const out = settings.out === '-' ? null : settings.out ?? (settings.quick || settings.only ? null : join(ROOT, 'BENCHMARKS.md'))
if (out) {
  writeFileSync(out, report(machine, totalSeconds))
  log(`wrote ${out}`)
}

function report(m: Machine, seconds: number): string {
  const analysis = join(import.meta.dir, 'ANALYSIS.md')
  return [
    '# Benchmarks',
    '',
    `Written by \`bun run bench\` (bench/main.ts) on ${m.date}; the run took ${(seconds / 60).toFixed(1)} minutes.`,
    'Every figure stands beside a baseline measured in the same run on the same machine, back to back:',
    'absolute numbers on a shared machine drift, ratios hold. Load comes from wrk in its own process.',
    '',
    '## Machine',
    '',
    '| | |',
    '|---|---|',
    `| CPU | ${m.cpu} |`,
    `| cores | ${m.cores} |`,
    `| memory | ${m.memory} |`,
    `| OS | ${m.os} |`,
    `| Bun | ${m.bun} |`,
    `| load tool | ${m.wrk} (Debian package) |`,
    `| broker | ${m.nats} |`,
    `| load average at start | ${m.load} |`,
    '',
    '## Settings of this run',
    '',
    `- ${settings.quick ? '**BENCH_QUICK=1** (smoke run, small sizes)' : 'full run'}; wrk \`-t1 --latency\`, ${settings.seconds} s per measured run after a ${settings.warmup} s warm-up;`,
    `  ${settings.connections} connections for throughput (scenarios 1-3), 1 connection for batch latency (4).`,
    '- The product runs as `bun run standalone/src/main.ts` (what `bun start` runs: TRANSPORT=memory, a fresh DATA_DIR, SQLite) or as every',
    '  process of deploy/local/processes.ts over a private `nats-server -js`. `LIMIT_*` are set to 10^9 so the limiter',
    '  does all its work on every request but admits all of them (the default limits of docs/decisions.md §1, 5 req/s per key, would make',
    '  every throughput run a 429 run).',
    `- Export sizes ${settings.exportSizes.map((n) => n.toLocaleString('en-US')).join(' and ')} rows; ${settings.scans.toLocaleString('en-US')} scans of one code`,
    `  for the scan export and the breakdown; ${settings.ingest.toLocaleString('en-US')} scans for the ingestion run.`,
    '- Ratios: throughput = product / baseline; for an absolute target (latency, rows/s, RSS) the baseline column',
    '  shows the target (and the bare figure where there is one) and ratio = figure / target.',
    '',
    '## Results',
    '',
    markdownTable(rows),
    '',
    ...(existsSync(analysis) ? [readFileSync(analysis, 'utf8').trim(), ''] : []),
  ].join('\n')
}
