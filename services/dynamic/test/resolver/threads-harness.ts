import { spyOn } from 'bun:test'
import { createLocalBus } from '@lr/platform/bus-local'
import { type Bus, dynamicChangedSubject, type ResolverEntry, type ScanBatch, type ScanEvent } from '@lr/proto'
import { serveDynamic } from '../../src/handlers'
import { type ResolverThreads, startResolverThreads } from '../../src/resolver/threads'
import { personal, setup } from '../fixtures'
import { BROWSER, KEY, resumable } from './fixtures'

// What the resolver threads' tests start: threads over a real dynamic service on the local bus,
// HTTP on a shared port, answered by two threads, each with its own cache; this thread holds the
// bus and collects the scans. A test file calls closeAll after each test.

export const DESTINATION = 'https://example.com/landing'
export const FALLBACK = 'https://example.com/over'

export interface Running {
  bus: Bus
  threads: ResolverThreads
  scans: ScanEvent[]
  /** The hand-overs as they came, each a ScanBatch. */
  batches: ScanBatch[]
  failures: Error[]
  service: ReturnType<typeof setup>['service']
  /** `missed`: the service's change events are dropped, as while a NATS connection was down. */
  events: { missed: boolean }
  /** Tells the bus's `resumed` listeners, as NATS does after a reconnect. */
  resume(): void
  get(code: string, init?: RequestInit): Promise<Response>
  /** `n` GETs at once, each on a connection of its own, so the kernel spreads them over the threads. */
  many(code: string, n: number): Promise<Response[]>
  close(): Promise<void>
}

/** Stops every resolver `start` made since the last call (each test file calls it after each test). */
export async function closeAll(): Promise<void> {
  for (const one of running.splice(0)) await one.close()
}
const running: Running[] = []

/** `cacheEntries`: each thread's cache size; `slotSweepEvery`: ResolverThreadsOptions'. */
export async function start(options: { threads?: number; analyticsCount?: number; cacheEntries?: number; slotSweepEvery?: number } = {}): Promise<Running> {
  const bus = createLocalBus()
  const resume = resumable(bus)
  const events = { missed: false }
  const announce = async (entry: ResolverEntry) => (events.missed ? undefined : bus.publish(dynamicChangedSubject(entry.code), entry))
  const ctx = setup({ announce, countScans: async () => options.analyticsCount ?? 0 })
  const stopServing = serveDynamic(bus, ctx.service)
  const scans: ScanEvent[] = []
  const batches: ScanBatch[] = []
  const failures: Error[] = []
  const threads = await startResolverThreads({
    threads: options.threads ?? 2,
    port: 0,
    bus,
    publishScans: (batch) => {
      batches.push(batch)
      scans.push(...(JSON.parse(batch.events) as ScanEvent[]))
    },
    settings: { trustProxy: 0, visitorHashKey: KEY, ...(options.cacheEntries !== undefined && { cache: { maxEntries: options.cacheEntries } }) },
    answerMetrics: true,
    slotSweepEvery: options.slotSweepEvery,
    failed: (error) => void failures.push(error),
  })
  const get = (code: string, init: RequestInit = {}) =>
    fetch(`http://127.0.0.1:${threads.port}/${code}`, { redirect: 'manual', keepalive: false, headers: { 'user-agent': BROWSER }, ...init })
  const one: Running = {
    bus, threads, scans, batches, failures, service: ctx.service, events, resume, get,
    many: (code, n) => Promise.all(Array.from({ length: n }, () => get(code))),
    async close() {
      await threads.stop()
      stopServing()
      await bus.close()
      ctx.close()
    },
  }
  running.push(one)
  return one
}

export const until = async (ok: () => boolean, what: string) => {
  for (let i = 0; i < 400 && !ok(); i++) await Bun.sleep(5)
  if (!ok()) throw new Error(`timed out waiting for ${what}`)
}

/** Sees every message of type `t` this thread posts to a Worker (each still sent); `mockRestore` ends it. */
export function watchPosts(t: string, seen: (message: unknown, worker: Worker) => void) {
  const original = Worker.prototype.postMessage
  return spyOn(Worker.prototype, 'postMessage').mockImplementation(function (this: Worker, message: unknown, ...rest: unknown[]) {
    if ((message as { t?: string }).t === t) seen(message, this)
    return original.call(this, message, ...(rest as []))
  } as Worker['postMessage'])
}

export const created = async (r: Running, extra: Record<string, unknown> = {}) =>
  (await r.service.create(personal, { destination_url: DESTINATION, name: 'Code', ...extra })).created[0]!.code
