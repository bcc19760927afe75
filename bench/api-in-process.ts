// CPU and wall time per API request of the one-process product driven through `gateway.handle`
// (no socket, no wrk), for the analysis (not part of `bun run bench`): what the services' path
// costs apart from HTTP, with less noise than a wrk run on two shared cores.
//   bun run bench/api-in-process.ts get|list|create [requests per round]   (C=<concurrency>, default 64)
import { startInProcessStack } from '../test/harness/stack'
import { freshMember } from '../test/harness/fixtures'

const what = process.argv[2] ?? 'get'
const requests = Number(process.argv[3] ?? 20_000)
const concurrency = Number(Bun.env.C ?? 64)
const stack = await startInProcessStack()
try {
  const { key } = await freshMember(stack)
  const headers = { 'x-api-key': key, 'content-type': 'application/json' }
  const body = JSON.stringify({ destination_url: 'https://example.com/menu?table=12', name: 'Menu', style: { fg: '#112233' } })
  const created = (await (await stack.request('/v1/dynqrcodes', { method: 'POST', headers, body })).json()) as { created: { code: string }[] }
  const path = what === 'list' ? '/v1/dynqrcodes?limit=100' : what === 'get' ? `/v1/dynqrcodes/${created.created[0]!.code}` : '/v1/dynqrcodes'
  const init = what === 'create' ? { method: 'POST', headers, body } : { headers }
  const one = async () => {
    const res = await stack.request(path, init)
    await res.arrayBuffer()
    if (res.status >= 300) throw new Error(`${what}: ${res.status}`)
  }
  const round = async () => {
    const cpu = process.cpuUsage()
    const started = performance.now()
    let left = requests
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await one()
    }))
    const used = process.cpuUsage(cpu)
    return `${what}: ${((used.user + used.system) / requests).toFixed(1)} µs CPU (all threads), ${(((performance.now() - started) * 1000) / requests).toFixed(1)} µs wall per request`
  }
  await round() // warm-up
  for (let i = 0; i < 3; i++) console.log(await round())
} finally {
  await stack.stop()
}
