import type { Config } from '@lr/proto'
import { createAnalyticsService } from './service'
import { openAnalyticsStore } from './start'
import type { IngestReply, IngestRequest } from './ingest-in-worker'

/**
 * Worker side of ingestInWorker: its own connection to the analytics SQLite file (WAL lets the
 * main thread read while this one writes) and the same `ingest` the service runs elsewhere.
 */
declare const self: Worker
let ingest: ((events: unknown[]) => Promise<number>) | undefined
let close: (() => Promise<void>) | undefined

const queries = () => {
  throw new Error('the ingestion worker answers no queries')
}

self.onmessage = async ({ data }: MessageEvent<IngestRequest | { type: 'open'; config: Config } | { type: 'close' }>) => {
  if (data.type === 'open') {
    const opened = await openAnalyticsStore(data.config)
    close = opened.close
    ingest = createAnalyticsService({ store: opened.store, directory: { liveCodes: queries, find: queries } }).ingest
    return self.postMessage({ type: 'opened' })
  }
  if (data.type === 'close') {
    await close?.()
    return self.postMessage({ type: 'closed' })
  }
  let reply: IngestReply
  try {
    reply = { id: data.id, applied: await ingest!(JSON.parse(data.events)) }
  } catch (error) {
    reply = { id: data.id, error: (error as Error)?.message ?? String(error) }
  }
  self.postMessage(reply)
}
