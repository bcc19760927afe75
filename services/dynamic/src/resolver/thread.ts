// A resolver thread: one listener on SHORT_PORT (shared with the others, SO_REUSEPORT) answering
// short links from its own cache. Started by ./threads.ts, which holds the bus for it.
//
// Every module a thread loads is resident in its own heap: a thread that loaded the contracts'
// index, pino and prom-client took 11 MB, and two of them pushed the one-process product's export
// past its memory target. So this file and what it loads stay light (about 5 MB a thread): the
// main thread checks change events, writes the log lines and holds the metrics registry.
import { AppError, type ErrorCode } from '@lr/proto/app-error'
import { scanBatchOf } from '@lr/proto/scan-batch'
import type { Logger, ResolveReply, ResolverEntry, ScanEvent } from '@lr/proto'
import { errorFields, installLogger } from '@lr/platform/log'
import { takeTallies } from '@lr/platform/tally'
import { createResolver, type ResolverFeed } from './resolver'
import { observeResolver } from './observe'
import { createSharedScanCounts } from './shared-counts'
import type { FromThread, ToThread } from './thread-messages'

declare const self: Worker
const post = (message: FromThread) => self.postMessage(message)

/** Log lines go to the main thread's logger. */
function postingLogger(bindings: Record<string, unknown> = {}): Logger {
  const line = (level: 'error' | 'warn' | 'info' | 'debug') => (fields: object, message: string) => post({ t: 'log', level, fields: { ...bindings, ...fields }, message })
  return { error: line('error'), warn: line('warn'), info: line('info'), debug: line('debug'), child: (more) => postingLogger({ ...bindings, ...more }) }
}
installLogger(postingLogger())

/** Asks of the main thread, each waiting for the answer with its id. */
let nextId = 0
const lookups = new Map<number, { resolve(reply: ResolveReply): void; reject(error: Error): void }>()
const metricsWaiting = new Map<number, (text: string, contentType: string) => void>()
const listeners = new Set<(entry: ResolverEntry) => void>()
const forgetters = new Set<() => number | Promise<number>>()
const shared = createSharedScanCounts()

const feed: ResolverFeed = {
  lookup: (code) =>
    new Promise((resolve, reject) => {
      const id = nextId++
      lookups.set(id, { resolve, reject })
      post({ t: 'lookup', id, code })
    }),
  follow(changed) {
    listeners.add(changed)
    return () => void listeners.delete(changed)
  },
  resumed(forget) {
    forgetters.add(forget)
    return () => void forgetters.delete(forget)
  },
}

const askMetrics = () =>
  new Promise<Response>((resolve) => {
    const id = nextId++
    metricsWaiting.set(id, (text, contentType) => resolve(new Response(text, { headers: { 'content-type': contentType, 'cache-control': 'no-store' } })))
    post({ t: 'metrics', id })
  })

/**
 * Scans cross to the main thread together, as one JSON text with their codes, a millisecond's
 * worth at a time (or HAND_OVER_MAX scans): each message wakes that thread, and one per
 * event-loop turn cost it 1.9 µs per scan against 1.3-1.5 µs so (bench/ANALYSIS.md, fifteenth
 * session). The main thread passes the text on unread (a ScanBatch).
 */
const HAND_OVER_MS = 1
const HAND_OVER_MAX = 256
let held: ScanEvent[] = []
function sendHeld(): void {
  if (held.length === 0) return
  const batch = scanBatchOf(held)
  held = []
  post({ t: 'scans', batch })
}
function publishScan(event: ScanEvent): void {
  const count = held.push(event)
  if (count === 1) setTimeout(sendHeld, HAND_OVER_MS)
  else if (count >= HAND_OVER_MAX) sendHeld()
}

let stop: (() => Promise<void>) | undefined
let serving: ReturnType<typeof createResolver> | undefined

/**
 * The capped codes whose count slot this thread holds, for a sweep of the slots (./threads.ts),
 * once its resolver let go of those its cache does not hold (dropUnheldCounts).
 */
function heldCodes(): string[] {
  serving?.dropUnheldCounts()
  return shared.heldCodes()
}

/**
 * A start that throws (the resolver's: its GeoIP files unreadable; the listener's: its port taken)
 * is posted as `failed` with the error's class, code and message. Uncaught, it reached the main
 * thread only as Bun prints an error, source lines first ("25 | ..."): the start-up line showed
 * that frame, not the error (an ErrorEvent across threads carries no error object).
 */
function start(message: Extract<ToThread, { t: 'start' }>): void {
  let resolver: ReturnType<typeof createResolver> | undefined
  let server: ReturnType<typeof Bun.serve>
  try {
    for (const block of message.blocks) shared.addBlock(block)
    resolver = createResolver({ ...message.settings, feed, publishScan, counts: shared.counts })
    server = Bun.serve({ port: message.port, hostname: '0.0.0.0', reusePort: true, ...observeResolver(resolver.fetch, message.answerMetrics ? askMetrics : undefined) })
  } catch (error) {
    resolver?.stop()
    const { type, code, message } = errorFields(error).err
    return post({ t: 'failed', error: { type, code, message } })
  }
  const running = resolver
  serving = resolver
  stop = async () => {
    await server.stop()
    running.stop()
    sendHeld()
  }
  post({ t: 'listening', port: server.port! })
}

self.onmessage = ({ data: message }: MessageEvent<ToThread>) => {
  switch (message.t) {
    case 'start':
      return start(message)
    case 'looked': {
      const waiting = lookups.get(message.id)
      lookups.delete(message.id)
      if ('error' in message) return waiting?.reject(new AppError(message.error.code as ErrorCode, message.error.message))
      if (message.slot !== undefined) shared.know(message.reply!.code, message.slot)
      return waiting?.resolve(message.reply)
    }
    case 'block':
      return shared.addBlock(message.block)
    case 'changed':
      for (const entry of message.entries) for (const changed of listeners) changed(entry)
      post({ t: 'applied', id: message.id })
      return
    case 'tallies':
      return post({ t: 'tallies', id: message.id, snapshot: takeTallies(), heapUsed: process.memoryUsage().heapUsed })
    case 'held':
      return post({ t: 'held', id: message.id, codes: heldCodes() })
    case 'forget':
      return void Promise.all([...forgetters].map((forget) => forget())).then((counts) => post({ t: 'forgot', id: message.id, codes: counts.reduce((sum, n) => sum + n, 0) }))
    case 'metrics':
      metricsWaiting.get(message.id)?.(message.text, message.contentType)
      metricsWaiting.delete(message.id)
      return
    case 'stop':
      void (stop?.() ?? Promise.resolve()).catch((error) => post({ t: 'log', level: 'error', fields: errorFields(error), message: 'resolver thread did not stop cleanly' })).then(() => post({ t: 'stopped' }))
  }
}
