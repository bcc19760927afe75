import type { ResolveReply, ResolverEntry, ScanBatch } from '@lr/proto'
import type { TallySnapshot } from '@lr/platform/tally'
import type { ResolverSettings } from './resolver'

/**
 * The messages between the main thread and a resolver thread (./threads.ts, ./thread.ts). The
 * main thread holds the bus: it answers the thread's lookups, forwards every change event, takes
 * its scans on to the scan publisher and gathers its tallies before a scrape.
 */
export type ToThread =
  /** `answerMetrics`: the thread's listener answers /metrics (ResolverThreadsOptions). */
  | { t: 'start'; settings: ResolverSettings; port: number; blocks: readonly SharedArrayBuffer[]; answerMetrics: boolean }
  /** A capped code's answer names the slot of its count (./shared-counts.ts). */
  | { t: 'looked'; id: number; reply: ResolveReply; slot?: number }
  /** A new block of count slots, sent before any answer naming a slot in it. */
  | { t: 'block'; block: SharedArrayBuffer }
  | { t: 'looked'; id: number; error: { code: string; message: string } }
  /** Change events, checked by the main thread (createBusFeed): those of one burst in one message; answered `applied` with its id. */
  | { t: 'changed'; id: number; entries: ResolverEntry[] }
  | { t: 'tallies'; id: number }
  /** Change events may have been missed (the bus reconnected): forget every cached code; answered `forgot` with its id. */
  | { t: 'forget'; id: number }
  /** Which capped codes' count slots the thread holds (a sweep of the slots); answered `held` with its id. */
  | { t: 'held'; id: number }
  | { t: 'metrics'; id: number; text: string; contentType: string }
  | { t: 'stop' }

export type FromThread =
  | { t: 'listening'; port: number }
  /** The thread's start threw: the error's class (`type`), code and message (ThreadError). */
  | { t: 'failed'; error: ThreadError }
  /** A log line of the thread, written by this thread's logger (one writer of stdout, no pino there). */
  | { t: 'log'; level: 'error' | 'warn' | 'info' | 'debug'; fields: object; message: string }
  | { t: 'lookup'; id: number; code: string }
  /** Scans as one JSON array with their codes: one string crosses threads far cheaper than its objects. */
  | { t: 'scans'; batch: ScanBatch }
  /** `heapUsed`: the thread's own heap in use, read as it answers (a scrape's, never a request's work). */
  | { t: 'tallies'; id: number; snapshot: TallySnapshot; heapUsed: number }
  /** How many cached codes the thread forgot for `forget` `id`. */
  | { t: 'forgot'; id: number; codes: number }
  | { t: 'held'; id: number; codes: string[] }
  /** The change events of `changed` `id` are in this thread's cache: its next request sees them. */
  | { t: 'applied'; id: number }
  | { t: 'metrics'; id: number }
  | { t: 'stopped' }

/** An error of a thread as it crosses to the main thread: an Error does not cross whole. */
export interface ThreadError {
  type: string
  code?: string | number
  message: string
}
