// Run by scan-spool-failure.test.ts under a file size limit (ulimit -f, SIGXFSZ ignored), so each
// of the spool's files takes 64 KiB and then refuses its write, as a full disk does (a short write,
// then EFBIG where a disk says ENOSPC). The resolver's publisher, with the process's real logger
// (JSON lines on stdout), sends argv[4] scans to NATS at argv[2], 250 a turn, through a buffer of
// 100 and the spool at argv[3]; once all are settled it prints its counts as the last line.
import { connect } from 'nats'
import type { ScanEvent } from '@lr/proto'
import { startLogging } from '@lr/platform/log'
import { scansLost } from '@lr/platform/metrics'
import { openScanSpool } from '@lr/platform/scan-spool'
import { createJetStreamScanPublisher } from '@lr/platform/scan-stream-publisher'

const [url, dir, count] = [process.argv[2]!, process.argv[3]!, Number(process.argv[4])]
startLogging('resolver', 'info')
const nc = await connect({ servers: url })
const spool = openScanSpool(dir, { maxBytes: 1 << 26 })
const publisher = createJetStreamScanPublisher(nc, { maxBuffer: 100, spool, spoolGuard: { probeMs: 20, reportMs: 100 } })
const scan = (n: number): ScanEvent => ({ scan_id: `scan-${n}`, code: 'Code0001', scanned_at: 1_736_510_400_000 + n, user_agent: 'UA', visitor_id: 'a'.repeat(64), country: 'DE' })
// As redirects come: a few hundred a turn, each turn's spooled scans written at its end.
for (let n = 1; n <= count; n++) if ((publisher.publish(scan(n)), n % 250 === 0)) await new Promise((resolve) => setImmediate(resolve))
let timer: Timer | undefined
await Promise.race([publisher.flush(), new Promise((resolve) => (timer = setTimeout(resolve, 20_000)))])
clearTimeout(timer)
const settled = { pending: publisher.pending(), dropped: publisher.dropped(), lost: (await scansLost.get()).values[0]?.value ?? 0 }
publisher.close()
await nc.close()
console.log(JSON.stringify({ settled }))
