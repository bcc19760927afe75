// Scan publisher, in its own process: N scan events of one code through the resolver's own
// JetStream publisher (createJetStreamScanPublisher: batches on SCAN_BATCHES, Nats-Msg-Id = batch
// id), handed over as fast as it takes them, in rounds of ROUND per event-loop turn (a resolver
// under load counts many redirects per turn).
//   bun run bench/clients/publish-scans.ts NATS_URL CODE N [ROUND]
// Prints {"startedAt" (epoch ms), "published", "seconds"}: seconds until every PubAck came back.
import { createHash } from 'node:crypto'
import { connect } from 'nats'
import { createJetStreamScanPublisher } from '@lr/platform/scan-stream-publisher'

const [url, code, count, roundArg] = process.argv.slice(2)
const total = Number(count)
const round = Number(roundArg ?? 200)
const AGENTS = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
]
const COUNTRIES = ['DE', 'US', 'FR', 'GB', 'unknown']
const visitors = Array.from({ length: 5000 }, (_, i) => createHash('sha256').update(`visitor ${i}`).digest('hex'))

const nc = await connect({ servers: url })
// The buffer holds every scan: the benchmark measures throughput, not the outage bound.
const publisher = createJetStreamScanPublisher(nc, { maxBuffer: total + 1, timeoutMs: 30_000 })
const startedAt = Date.now()
const started = performance.now()
for (let n = 0; n < total; ) {
  // Hand scans over while the publisher keeps up, as a resolver would; let it send between rounds.
  for (const end = Math.min(total, n + round); n < end; n++)
    publisher.publish({
      // Time-ordered ids, as the resolver makes them (scan.ts): analytics' scan_id index then
      // grows at its end, as in production.
      scan_id: Bun.randomUUIDv7(), code: code!, scanned_at: Date.now(), user_agent: AGENTS[n % AGENTS.length]!,
      visitor_id: visitors[n % visitors.length]!, country: COUNTRIES[n % COUNTRIES.length]!,
    })
  if (publisher.pending() > 20_000) await Bun.sleep(1)
  else await new Promise((resolve) => setImmediate(resolve))
}
await publisher.flush()
const seconds = (performance.now() - started) / 1000
const failed = publisher.dropped()
publisher.close()
await nc.drain()
console.log(JSON.stringify({ startedAt, published: total - failed, seconds }))
