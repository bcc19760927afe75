// Scan publisher, in its own process: N scan events of one code on the JetStream stream SCANS
// (subject scans.<code>, Nats-Msg-Id = scan_id, as the resolver publishes them), up to WINDOW
// awaiting their PubAck at once.
//   bun run bench/clients/publish-scans.ts NATS_URL CODE N [WINDOW]
// Prints {"startedAt" (epoch ms), "published", "seconds"}.
import { createHash } from 'node:crypto'
import { connect } from 'nats'

const [url, code, count, windowArg] = process.argv.slice(2)
const total = Number(count)
const window = Number(windowArg ?? 2000)
const AGENTS = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
]
const COUNTRIES = ['DE', 'US', 'FR', 'GB', 'unknown']
const visitors = Array.from({ length: 5000 }, (_, i) => createHash('sha256').update(`visitor ${i}`).digest('hex'))
const encoder = new TextEncoder()
const run = `${Date.now().toString(36)}`

const nc = await connect({ servers: url })
const js = nc.jetstream({ timeout: 30_000 })
const startedAt = Date.now()
const started = performance.now()
let next = 0
let failed = 0
async function lane() {
  while (next < total) {
    const n = next++
    const event = {
      scan_id: `${run}-${n}`, code, scanned_at: Date.now(), user_agent: AGENTS[n % AGENTS.length]!,
      visitor_id: visitors[n % visitors.length]!, country: COUNTRIES[n % COUNTRIES.length]!,
    }
    try {
      await js.publish(`scans.${code}`, encoder.encode(JSON.stringify(event)), { msgID: event.scan_id })
    } catch (error) {
      failed++
      if (failed < 5) console.error('publish failed:', error)
    }
  }
}
await Promise.all(Array.from({ length: window }, lane))
const seconds = (performance.now() - started) / 1000
await nc.drain()
console.log(JSON.stringify({ startedAt, published: total - failed, seconds }))
