// Profiles the one-process product under one load, for the analysis (not part of `bun run bench`):
//   BENCH_PROFILE=/tmp/prof bun run bench/profile.ts list|create|batch|resolve [seconds]
// Writes Bun's .cpuprofile and its Markdown summary into $BENCH_PROFILE when the product stops.
import { startOneProcess } from './product'
import { apiFixture, BATCH_BODY, CREATE_BODY } from './scenarios/api-fixture'
import { DESTINATION } from './scenarios/resolver'
import { api } from './product'
import { BROWSER_UA, wrk } from './wrk'

if (!Bun.env.BENCH_PROFILE) throw new Error('set BENCH_PROFILE=<dir>')
const [what = 'list', seconds = '8'] = process.argv.slice(2)
const product = await startOneProcess()
try {
  const fixture = await apiFixture(product)
  const headers = { 'x-api-key': fixture.key }
  const spec =
    what === 'list' ? { url: `${product.api}/v1/dynqrcodes?limit=100`, connections: 64, headers }
    : what === 'create' ? { url: `${product.api}/v1/dynqrcodes`, connections: 64, headers, post: { body: JSON.stringify(CREATE_BODY) } }
    : what === 'batch' ? { url: `${product.api}/v1/qrcodes/batch`, connections: 1, headers, post: { body: JSON.stringify(BATCH_BODY) } }
    : { url: `${product.short}/${(await api(product, fixture.key, 'POST', '/v1/dynqrcodes', { destination_url: DESTINATION, name: 'Hot' })).json.created[0].code}`, connections: 64, headers: { 'user-agent': BROWSER_UA } }
  const result = await wrk({ ...spec, seconds: Number(seconds) })
  console.log(`${what}: ${Math.round(result.rps)}/s, p50 ${result.p50} ms, p99 ${result.p99} ms, ${result.bad} bad`)
  await fixture.stop()
} finally {
  await product.stop()
}
