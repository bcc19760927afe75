// Run by record-event-spool-failure.test.ts under a file size limit (ulimit -f, SIGXFSZ ignored), so
// each file of the record event spool takes 64 KiB and then refuses its write, as a full disk does
// (EFBIG where a disk says ENOSPC). A records process's sink (processRecordEvents on DATA_DIR
// argv[3], the real logger: JSON lines on stdout) gets argv[4] events, one a turn, while
// RECORD_EVENTS (NATS at argv[2]) refuses them; then the stream takes them again, and once it
// holds them all (or 20 s passed) the last line gives the counts.
import { connect } from 'nats'
import { loadConfig } from '@lr/proto'
import { startLogging } from '@lr/platform/log'
import { recordEventsLost } from '@lr/platform/metrics'
import { processRecordEvents } from '@lr/platform/record-stream'
import { paddedEvent, refuseRecordEvents, storedEventIds, takeRecordEvents } from './record-event-stream.fixture'

const [url, dataDir, count] = [process.argv[2]!, process.argv[3]!, Number(process.argv[4])]
startLogging('records', 'info')
const nc = await connect({ servers: url })
const jsm = await nc.jetstreamManager()
await refuseRecordEvents(jsm)
const sink = processRecordEvents(nc, loadConfig({ DATA_DIR: dataDir }), 'records')

// After the module's top level, as in a service process: an unhandled rejection now ends the process.
setTimeout(async () => {
  let rejected = 0
  for (let n = 1; n <= count; n++) await sink(paddedEvent(n)).catch(() => rejected++)
  await takeRecordEvents(jsm)
  const deadline = Date.now() + 20_000
  while ((await storedEventIds(jsm)).length < count && Date.now() < deadline) await Bun.sleep(100)
  const lost = (await recordEventsLost.get()).values.reduce((sum, { value }) => sum + value, 0)
  console.log(JSON.stringify({ settled: { rejected, lost, stored: await storedEventIds(jsm) } }))
  await nc.close()
  process.exit(0)
}, 0)
