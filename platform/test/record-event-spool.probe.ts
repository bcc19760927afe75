// Run by record-event-spool.test.ts without the right to write anywhere (as root: without
// CAP_DAC_OVERRIDE): opens the record-event sink on DATA_DIR (argv[2]) and prints the lines it logged, as JSON.
import type { NatsConnection } from 'nats'
import { loadConfig } from '@lr/proto'
import { processRecordEvents } from '@lr/platform/record-stream'
import { captureLog } from './log-capture'

const nc = { jetstream: () => ({}), info: undefined } as unknown as NatsConnection
const log = captureLog()
processRecordEvents(nc, loadConfig({ DATA_DIR: process.argv[2]! }), 'records')
log.restore()
console.log(JSON.stringify(log.lines.map((line) => [line.dir, line.msg])))
