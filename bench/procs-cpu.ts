// CPU time of each process of the NATS deployment under one API load, for the analysis (not part
// of `bun run bench`): which process a request's cost sits in (bench/ANALYSIS.md, eighth session).
//   bun run bench/procs-cpu.ts list|create|resolve [limit]
import { readdirSync, readFileSync } from 'node:fs'
import { api, startNatsProduct } from './product'
import { apiFixture, CREATE_BODY } from './scenarios/api-fixture'
import { DESTINATION } from './scenarios/resolver'
import { BROWSER_UA, wrk } from './wrk'

const [what = 'list', limit = '100'] = process.argv.slice(2)
const SECONDS = 8

/** Clock ticks (1/100 s) of user + system time of every process on the machine, by "pid command". */
const ticks = () =>
  Object.fromEntries(readdirSync('/proc').filter((d) => /^\d+$/.test(d)).flatMap((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').slice(0, 90)
      return [[`${pid} ${command}`, Number(fields[11]) + Number(fields[12])]]
    } catch {
      return [] // a process that ended meanwhile
    }
  }))

const product = await startNatsProduct()
try {
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
  console.log(`${what}: ${Math.round(result.rps)}/s over ${SECONDS} s`)
  for (const [process, t] of Object.entries(after)) {
    const used = (t - (before[process] ?? 0)) / 100
    if (used >= 0.2) console.log(`${used.toFixed(2)} s CPU, ${((used * 1e6) / (result.rps * SECONDS)).toFixed(0)} µs per request: ${process}`)
  }
  await fixture.stop()
} finally {
  await product.stop()
}
