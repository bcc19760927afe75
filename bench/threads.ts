// CPU time of each thread of the one-process product under the resolver load, for the analysis
// (not part of `bun run bench`): on a machine whose neighbours steal CPU, the main thread's CPU
// per redirect moves less between runs than redirects/s do.
//   bun run bench/threads.ts [seconds] [resolve|create|get|list|healthz|nokey]
// get: one record by its code; healthz: every gateway plugin and no key; nokey: get without a key (403).
import { threadTicks } from './procs'
import { api, startOneProcess } from './product'
import { apiFixture, CREATE_BODY } from './scenarios/api-fixture'
import { DESTINATION } from './scenarios/resolver'
import { BROWSER_UA, wrk, type WrkRun } from './wrk'

const seconds = Number(process.argv[2] ?? 10)
const what = process.argv[3] ?? 'resolve'
const product = await startOneProcess()
try {
  const fixture = await apiFixture(product)
  const code = (await api(product, fixture.key, 'POST', '/v1/dynqrcodes', { destination_url: DESTINATION, name: 'Hot' })).json.created[0].code
  const pid = product.gatewayPid
  const ticks = () => threadTicks(pid!)
  const before = ticks()
  const spec: Omit<WrkRun, 'seconds'> = what === 'create'
    ? { url: `${product.api}/v1/dynqrcodes`, connections: 64, headers: { 'x-api-key': fixture.key }, post: { body: JSON.stringify(CREATE_BODY) } }
    : what === 'get' ? { url: `${product.api}/v1/dynqrcodes/${code}`, connections: 64, headers: { 'x-api-key': fixture.key } }
    : what === 'nokey' ? { url: `${product.api}/v1/dynqrcodes/${code}`, connections: 64 }
    : what === 'healthz' ? { url: `${product.api}/healthz`, connections: 64 }
    : what === 'list' ? { url: `${product.api}/v1/dynqrcodes?limit=100`, connections: 64, headers: { 'x-api-key': fixture.key } }
    : { url: `${product.short}/${code}`, connections: 64, headers: { 'user-agent': BROWSER_UA } }
  const result = await wrk({ ...spec, seconds })
  const after = ticks()
  const redirects = result.rps * seconds
  console.log(`${what}: ${Math.round(result.rps)}/s over ${seconds} s, p99 ${result.p99} ms`)
  for (const [thread, t] of Object.entries(after)) {
    const used = (t - (before[thread] ?? 0)) / 100
    if (used >= 0.1) console.log(`${thread}: ${used.toFixed(2)} s CPU, ${((used * 1e6) / redirects).toFixed(1)} µs per request`)
  }
  await fixture.stop()
} finally {
  await product.stop()
}
