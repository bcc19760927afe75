import { AppError, type Bus, type ResolverEntry, type ScanBatch } from '@lr/proto'
import { errorFields, log } from '@lr/platform/log'
import { forgetThreadHeap, gatherBeforeScrape, METRICS_CONTENT_TYPE, metricsText, reportThreadHeap } from '@lr/platform/metrics'
import { listening, StartupError } from '@lr/platform/startup'
import { addTallies } from '@lr/platform/tally'
import { createTurnBatcher } from '@lr/platform/turn-batch'
import { createBusFeed } from './bus-feed'
import type { ResolverSettings } from './resolver'
import { createCountSlots } from './shared-counts'
import type { FromThread, ToThread } from './thread-messages'
import { printedErrorLine, threadErrorLine } from './thread-errors'

export interface ResolverThreadsOptions {
  /** Threads to start (at least 1). */
  threads: number
  /** SHORT_PORT; 0 takes a free port (the first thread's, which the others then share). */
  port: number
  /** The bus of this thread: each thread's lookups and every change event go over it. */
  bus: Bus
  /** Where the threads' scans go on (this thread's scan publisher's publishBatch). */
  publishScans: (batch: ScanBatch) => void
  settings: ResolverSettings
  /**
   * Whether the threads' listeners answer /metrics (with the whole process's metrics, asked of
   * this thread). Without, /metrics there is the 404 of a path that is no code; this thread still
   * gathers their tallies before every scrape of its registry, wherever that is served.
   */
  answerMetrics: boolean
  /** A thread died while serving: the process cannot answer its share of the connections. */
  failed: (error: Error) => void
  /** Count slots given to new codes between two sweeps of the slots no thread holds; default SLOTS_PER_BLOCK. */
  slotSweepEvery?: number
}

export interface ResolverThreads {
  readonly port: number
  /** Capped codes holding a count slot (the threads' caches bound it, but for one sweep's worth). */
  readonly countSlots: number
  /** Sweeps the count slots now, after the one under way if any (tests). */
  sweepCountSlots(): Promise<void>
  /** Stops listening (answering the requests under way), hands on every scan, ends the threads. */
  stop(): Promise<void>
}

/** How long this thread waits for a thread's answer (its tallies before a scrape, the codes it forgot) before going on without it. */
const GATHER_TIMEOUT_MS = 1000
/** How long a write's answer waits for a thread to apply its change (a thread that stopped answering must not hold every write). */
const APPLY_TIMEOUT_MS = 1000
const STOP_TIMEOUT_MS = 10_000

/**
 * The short links of one process answered by threads of their own (RESOLVER_THREADS). One thread
 * answering redirects, the API, four services and the webhooks worker was the limit of the
 * one-process resolver: its threads now share SHORT_PORT (SO_REUSEPORT, the kernel spreads the
 * connections) and this thread holds the bus for them. Each keeps its own cache of codes, fed by
 * the change events this thread forwards to all of them, and hands its scans over a millisecond's
 * worth at a time; this thread publishes them as a resolver on it would have.
 */
export async function startResolverThreads(options: ResolverThreadsOptions): Promise<ResolverThreads> {
  if (options.threads < 1) throw new Error('startResolverThreads needs at least one thread')
  // SO_REUSEPORT would let the threads share the port with another process that also set it
  // (a second `bun start`): a plain listener first proves that nobody holds it.
  if (options.port !== 0) listening('SHORT_PORT', options.port, () => Bun.serve({ port: options.port, hostname: '0.0.0.0', fetch: () => new Response() })).stop(true)
  const feed = createBusFeed(options.bus)
  const threads: Worker[] = []
  /** Threads whose Worker closed (ended or failed): a stop does not wait for them. */
  const ended = new Set<Worker>()
  /** Answers the threads owe this one (tallies, codes forgotten), by the id of the ask. */
  const owed = new Map<number, (answer: FromThread) => void>()
  /** Per batch of change events sent, the threads that have not applied it yet. */
  const applying = new Map<number, { left: Set<Worker>; done: () => void }>()
  let nextId = 0
  let stopping = false
  const liveThreads = () => threads.filter((worker) => !ended.has(worker))
  /** A thread's name in lr_thread_heap_used_bytes. */
  const nameOf = (worker: Worker) => `resolver-${threads.indexOf(worker) + 1}`
  // Capped codes count in memory all threads share: the process stays exact at the cap.
  const countSlots = createCountSlots(
    (block) => {
      for (const worker of threads) worker.postMessage({ t: 'block', block } satisfies ToThread)
    },
    { sweep: () => void sweepSlots(), sweepEvery: options.slotSweepEvery },
  )
  let sweeping: Promise<void> | undefined
  /**
   * Frees the count slots of codes no thread caches any more (amortised: every sweepEvery new
   * slots, on the lookup path, never a redirect's); one at a time. A thread that does not answer
   * in time frees nothing this round: a slot it may still count in must not go to another code.
   */
  function sweepSlots(): Promise<void> {
    if (stopping) return Promise.resolve()
    return (sweeping ??= (async () => {
      countSlots.sweepStarted()
      const answers = await Promise.all(liveThreads().map((worker) => ask<'held'>(worker, (id) => ({ t: 'held', id }))))
      countSlots.sweepEnded(answers.every(Boolean) ? new Set(answers.flatMap((answer) => answer!.codes)) : undefined)
      sweeping = undefined
    })())
  }

  function serve(worker: Worker, message: FromThread): void {
    const post = (reply: ToThread) => worker.postMessage(reply)
    switch (message.t) {
      case 'lookup':
        feed.lookup(message.code).then(
          (reply) => post({ t: 'looked', id: message.id, reply, ...(reply?.scans !== undefined && { slot: countSlots.slotOf(message.code) }) }),
          (error) => post({ t: 'looked', id: message.id, error: { code: error instanceof AppError ? error.code : 'internal', message: (error as Error)?.message ?? String(error) } }),
        )
        return
      case 'scans':
        return options.publishScans(message.batch)
      case 'log':
        log()[message.level](message.fields, message.message)
        return
      case 'tallies': {
        // A thread zeroes what it hands over: an answer that comes after its scrape stopped
        // waiting (GATHER_TIMEOUT_MS) counts in the next scrape; dropped, it was lost for good.
        const waiting = owed.get(message.id)
        reportThreadHeap(nameOf(worker), message.heapUsed)
        return waiting ? waiting(message) : addTallies(message.snapshot)
      }
      case 'forgot':
      case 'held':
        return owed.get(message.id)?.(message)
      case 'applied': {
        const waiting = applying.get(message.id)
        waiting?.left.delete(worker)
        if (waiting?.left.size === 0) waiting.done()
        return
      }
      case 'metrics':
        metricsText().then(
          (text) => post({ t: 'metrics', id: message.id, text, contentType: METRICS_CONTENT_TYPE }),
          (error) => {
            log().error(errorFields(error), 'metrics not written for a resolver thread')
            post({ t: 'metrics', id: message.id, text: '', contentType: METRICS_CONTENT_TYPE })
          },
        )
        return
    }
  }

  function startOne(port: number, index: number): Promise<number> {
    const worker = new Worker(new URL('./thread.ts', import.meta.url).href)
    threads.push(worker)
    return new Promise<number>((resolve, reject) => {
      let up = false
      worker.onmessage = ({ data: message }: MessageEvent<FromThread>) => {
        if (message.t === 'listening') return void ((up = true), resolve(message.port))
        if (message.t === 'failed') {
          const { code } = message.error
          if (code === 'EADDRINUSE') return reject(new StartupError(`port ${port} (SHORT_PORT) is already in use`))
          return reject(Object.assign(new Error(`resolver thread ${index + 1} failed to start: ${threadErrorLine(message.error)}`), code === undefined ? {} : { code }))
        }
        serve(worker, message)
      }
      const died = (why: string) => {
        const error = new Error(`resolver thread ${index + 1} ${why}`)
        if (!up) reject(error)
        else if (!stopping) options.failed(error)
      }
      worker.addEventListener('error', (event) => died(`failed: ${printedErrorLine((event as ErrorEvent).message)}`))
      worker.addEventListener('close', () => {
        ended.add(worker)
        forgetThreadHeap(nameOf(worker))
        died('ended')
      })
      worker.postMessage({ t: 'start', settings: options.settings, port, blocks: countSlots.blocks(), answerMetrics: options.answerMetrics } satisfies ToThread)
    })
  }

  // Every thread's change events: no queue group, each must hear all of them. Those of one burst
  // (the writes of one commit, a batch create) cross as one message: each message wakes every
  // thread, which cost more than the change itself (bench/ANALYSIS.md, seventeenth session).
  // Each batch settles once every live thread has applied it: the dynamic service publishes a
  // change `settled` (Bus.publish) and answers the write after, so the very next scan, on
  // whichever thread, obeys it (the contract). Before, a scan could reach a thread before the
  // change did and get the old destination.
  const toThreads = createTurnBatcher<ResolverEntry>(
    (entries) =>
      new Promise<void>((resolve) => {
        const id = nextId++
        const live = liveThreads()
        if (live.length === 0) return resolve()
        const timer = setTimeout(() => done(), APPLY_TIMEOUT_MS)
        const done = () => {
          clearTimeout(timer)
          applying.delete(id)
          resolve()
        }
        applying.set(id, { left: new Set(live), done })
        for (const worker of live) worker.postMessage({ t: 'changed', id, entries } satisfies ToThread)
      }),
    Number.POSITIVE_INFINITY,
  )
  const unfollow = feed.follow((entry) => toThreads({ item: entry, bytes: 0 }))
  const tallies = (worker: Worker) => ask<'tallies'>(worker, (id) => ({ t: 'tallies', id })).then((answer) => answer && addTallies(answer.snapshot))
  const ungather = gatherBeforeScrape(() => Promise.all(threads.map(tallies)).then(() => undefined))
  // Change events may have been missed (the bus reconnected): every thread forgets its cached
  // codes, and the feed logs how many (a thread that does not answer in time is not counted).
  const unresumed = feed.resumed?.(async () => {
    const answers = await Promise.all(liveThreads().map((worker) => ask<'forgot'>(worker, (id) => ({ t: 'forget', id }))))
    return answers.reduce((sum, answer) => sum + (answer?.codes ?? 0), 0)
  })

  /** Asks `worker` and resolves with its answer, or with undefined after GATHER_TIMEOUT_MS. */
  function ask<T extends FromThread['t']>(worker: Worker, message: (id: number) => ToThread): Promise<Extract<FromThread, { t: T }> | undefined> {
    const id = nextId++
    return new Promise((resolve) => {
      const timer = setTimeout(() => (owed.delete(id), resolve(undefined)), GATHER_TIMEOUT_MS)
      owed.set(id, (answer) => {
        clearTimeout(timer)
        owed.delete(id)
        resolve(answer as Extract<FromThread, { t: T }>)
      })
      worker.postMessage(message(id))
    })
  }

  let stopped: Promise<void> | undefined
  const stop = () => (stopped ??= stopAll())
  async function stopAll(): Promise<void> {
    stopping = true
    unfollow()
    unresumed?.()
    ungather()
    await Promise.all(
      threads.map(
        (worker) =>
          new Promise<void>((resolve) => {
            // A thread that already ended has nothing to hand over and will not say `stopped`.
            if (ended.has(worker)) return resolve()
            const timer = setTimeout(resolve, STOP_TIMEOUT_MS)
            const done = () => (clearTimeout(timer), resolve())
            worker.addEventListener('message', ({ data }: MessageEvent<FromThread>) => data.t === 'stopped' && done())
            worker.addEventListener('close', done)
            worker.postMessage({ t: 'stop' } satisfies ToThread)
          }),
      ),
    )
    for (const worker of threads) worker.terminate()
  }

  try {
    const port = await startOne(options.port, 0)
    for (let i = 1; i < options.threads; i++) await startOne(port, i)
    log().debug({ threads: options.threads, port }, 'resolver threads listening')
    return {
      port,
      get countSlots() {
        return countSlots.size
      },
      sweepCountSlots: () => sweepSlots().then(sweepSlots),
      stop,
    }
  } catch (error) {
    await stop().catch((stopError) => log().error(errorFields(stopError), 'resolver threads did not stop'))
    throw error
  }
}
