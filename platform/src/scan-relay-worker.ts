import { connect, type NatsConnection } from 'nats'
import type { Config } from '@lr/proto'
import { startLogging } from './log'
import { closeReason, natsConnectOptions } from './nats-connect'
import { createScanRelay, type ScanRelay } from './scan-relay'
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

async function start(config: Config): Promise<void> {
  startLogging('analytics', config.LOG_LEVEL)
  try {
    nc = await connect(natsConnectOptions(config.NATS_URL, 'analytics-relay'))
    // Closed while not stopping: the client gave up (natsConnectOptions); the process decides.
    void nc.closed().then((error) => stopping || reply({ type: 'closed', message: closeReason(error) }))
    relay = createScanRelay(nc, { reportLag: (lag) => reply({ type: 'lag', lag }) })
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
