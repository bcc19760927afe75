// CPU time of each process of the NATS deployment under one API load, for the analysis (not part
// of `bun run bench`): which process a request's cost sits in (bench/ANALYSIS.md, eighth session).
//   bun run bench/procs-cpu.ts list|create|resolve|ingest [limit | scans]
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { connect } from 'nats'
import { api, member, type Product, startNatsProduct } from './product'
import { cpuTicksOf, ROOT, threadTicks } from './procs'
import { totalScans } from './scenarios/scans'
import { apiFixture, CREATE_BODY } from './scenarios/api-fixture'
import { DESTINATION } from './scenarios/resolver'
import { BROWSER_UA, wrk } from './wrk'

const [what = 'list', limit = '100'] = process.argv.slice(2)
const SECONDS = 8

/** Clock ticks (1/100 s) of user + system time of every process on the machine, by "pid command". */
const ticks = () =>
  Object.fromEntries(readdirSync('/proc').filter((d) => /^\d+$/.test(d)).flatMap((pid) => {
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').slice(0, 90)
      return [[`${pid} ${command}`, cpuTicksOf(`/proc/${pid}/stat`)]]
    } catch {
      return [] // a process that ended meanwhile
    }
  }))

/** Clock ticks of each thread of the processes whose command line names analytics. */
const analyticsThreadTicks = () =>
  Object.fromEntries(readdirSync('/proc').filter((d) => /^\d+$/.test(d)).flatMap((pid) => {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('analytics')) return []
      return Object.entries(threadTicks(pid)).map(([thread, t]) => [`  thread ${thread}`, t])
    } catch {
      return []
    }
  }))

/** Scenario 6's load: CPU per scan in each process (and analytics' threads) from the first publish until analytics counts them all. */
async function ingestLoad(product: Product) {
  const scans = Number(process.argv[3] ?? 1_000_000)
  const { key } = await member(product, 'ingest')
  const code = (await api(product, key, 'POST', '/v1/dynqrcodes', { destination_url: DESTINATION, name: 'Ingest' })).json.created[0].code as string
  const before = { ...ticks(), ...analyticsThreadTicks() }
  const started = performance.now()
  const publisher = Bun.spawn(['bun', 'run', join(ROOT, 'bench/clients/publish-scans.ts'), product.env.NATS_URL!, code, String(scans)], { cwd: ROOT, stdout: 'pipe' })
  while ((await totalScans(product, key, code)) < scans) await Bun.sleep(20)
  const seconds = (performance.now() - started) / 1000
  const counted = { ...ticks(), ...analyticsThreadTicks() }
  const published = (await new Response(publisher.stdout).text()).trim()
  await publisher.exited
  const usage = { total: Number(publisher.resourceUsage()!.cpuTime.total) }
  const nc = await connect({ servers: product.env.NATS_URL })
  const batches = (await (await nc.jetstreamManager()).streams.info('SCAN_BATCHES')).state.messages
  await nc.close()
  console.log(`ingest: ${Math.round(scans / seconds)}/s (${seconds.toFixed(2)} s) in ${batches} SCAN_BATCHES messages; published: ${published}`)
  console.log(`${(usage.total / 1e6).toFixed(2)} s CPU, ${(usage.total / scans).toFixed(1)} µs per scan: the publisher (its whole life, start included)`)
  for (const [name, t] of Object.entries(counted)) {
    const used = (t - (before[name] ?? 0)) / 100
    if (used >= 0.05) console.log(`${used.toFixed(2)} s CPU, ${((used * 1e6) / scans).toFixed(1)} µs per scan: ${name}`)
  }
}

/** An API or resolver load from wrk: CPU per request in each process. */
async function wrkLoad(product: Product) {
  const fixture = await apiFixture(product)
  const headers = { 'x-api-key': fixture.key }
  const resolveSpec = async () => {
    const code = (await api(product, fixture.key, 'POST', '/v1/dynqrcodes', { destination_url: DESTINATION, name: 'Hot' })).json.created[0].code
    return { url: `${product.short}/${code}`, connections: 64, headers: { 'user-agent': BROWSER_UA } }
  }
  const spec = what === 'list'
    ? { url: `${product.api}/v1/dynqrcodes?limit=${limit}`, connections: 64, headers }
    : what === 'resolve'
      ? await resolveSpec()
      : { url: `${product.api}/v1/dynqrcodes`, connections: 64, headers, post: { body: JSON.stringify(CREATE_BODY) } }
  await wrk({ ...spec, seconds: 2 })
  const before = ticks()
  const result = await wrk({ ...spec, seconds: SECONDS })
  const after = ticks()
  const nc = await connect({ servers: product.env.NATS_URL })
  const batches = (await (await nc.jetstreamManager()).streams.info('SCAN_BATCHES')).state
  await nc.close()
  console.log(`${what}: ${Math.round(result.rps)}/s over ${SECONDS} s; SCAN_BATCHES holds ${batches.messages} messages, ${Math.round(batches.bytes / 1024)} KiB`)
  for (const [process, t] of Object.entries(after)) {
    const used = (t - (before[process] ?? 0)) / 100
    if (used >= 0.2) console.log(`${used.toFixed(2)} s CPU, ${((used * 1e6) / (result.rps * SECONDS)).toFixed(0)} µs per request: ${process}`)
  }
  await fixture.stop()
}

const product = await startNatsProduct()
try {
  await (what === 'ingest' ? ingestLoad(product) : wrkLoad(product))
} finally {
  await product.stop()
}
