import { getPriority, setPriority } from 'node:os'
import { connect, type NatsConnection } from 'nats'
import type { Config } from '@lr/proto'
import { errorFields, log, startLogging } from './log'
import { closeReason, natsConnectOptions } from './nats-connect'
import { createScanRelay, type ScanRelay } from './scan-relay'
import { storeFullReason } from './jetstream-refusals'
import type { RelayReply, RelayRequest } from './scan-relay-in-worker'

/**
 * Worker side of startScanRelayInWorker: the relay on a NATS connection of its own, its lag
 * handed to the thread that serves /metrics, its log lines as the analytics process's.
 */
declare const self: Worker
let nc: NatsConnection | undefined
let relay: ScanRelay | undefined
let stopping = false
const reply = (message: RelayReply) => self.postMessage(message)

/**
 * SCANS's refusals for want of room go to the thread whose /metrics and /readyz show them (one
 * message per refused round, at most one a second; one when it stores again), not to a watch of
 * this thread, whose metrics nobody reads.
 */
let refusing = false
const refusals = {
  failed(error: unknown) {
    if (storeFullReason(error) === undefined) return false
    refusing = true
    reply({ type: 'refused', description: String((error as { description?: unknown }).description) })
    return true
  },
  stored() {
    if (!refusing) return
    refusing = false
    reply({ type: 'stored' })
  },
}

/**
 * Lowers this thread's CPU priority by SCAN_RELAY_NICE (README "Scan events"). The relay's copy
 * of each scan is the largest share of a redirect's CPU over NATS (bench/ANALYSIS.md,
 * "Twenty-fifth session"), and SCANS may trail: where the relay shares cores with the resolver,
 * a burst of redirects goes first. On Linux the nice value is a thread's own, so only this
 * Worker's thread is lowered (setPriority with no pid names the calling thread); the rest of the
 * analytics process, ingestion included, keeps its priority. Elsewhere (macOS) a nice value is
 * the whole process's, ingestion's too, so nothing is lowered there.
 */
function lowerPriority(by: number): void {
  if (by === 0 || process.platform !== 'linux') return
  try {
    setPriority(Math.min(19, getPriority() + by))
  } catch (error) {
    log().warn(errorFields(error), 'the scan relay could not lower its CPU priority: it runs at the process\'s')
  }
}

async function start(config: Config): Promise<void> {
  startLogging('analytics', config.LOG_LEVEL)
  lowerPriority(config.SCAN_RELAY_NICE)
  try {
    nc = await connect(natsConnectOptions(config.NATS_URL, 'analytics-relay'))
    // Closed while not stopping: the client gave up (natsConnectOptions); the process decides.
    void nc.closed().then((error) => stopping || reply({ type: 'closed', message: closeReason(error) }))
    relay = createScanRelay(nc, { reportLag: (lag) => reply({ type: 'lag', lag, heapUsed: process.memoryUsage().heapUsed }), refusals })
    await relay.start()
    reply({ type: 'started' })
  } catch (error) {
    await nc?.close()
    reply({ type: 'failed', message: error instanceof Error ? error.message : String(error) })
  }
}

self.onmessage = async ({ data }: MessageEvent<RelayRequest>) => {
  if (data.type === 'start') return start(data.config)
  if (data.type === 'giveWay') return relay?.giveWay(data.behind)
  stopping = true
  await relay?.stop()
  await nc?.close()
  reply({ type: 'stopped' })
}
