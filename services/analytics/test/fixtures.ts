import { expect } from 'bun:test'
import { AppError, type Principal } from '@lr/proto'
import type { ScanEvent } from '@lr/proto'
import type { CodeDirectory, StoredScan } from '../src/ports'

/** Real user agents of the clients the product meets. */
export const UA = {
  iphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  android: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36',
  windows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  slack: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
} as const

/** 2025-01-10 12:00:00 UTC in epoch milliseconds; DAY later is the next day. */
export const T0 = Date.UTC(2025, 0, 10, 12)
export const DAY = 86_400_000
export const HOUR = 3_600_000

export const visitor = (n: number) => n.toString(16).padStart(64, '0')

/** A stored scan: number n of code `code`, visitor 1, at T0 from an iPhone in DE, unless overridden. */
export const scan = (n: number, over: Partial<StoredScan> = {}): StoredScan => ({
  scan_id: `scan-${n.toString().padStart(5, '0')}`,
  code: 'Code0001',
  scanned_at: T0,
  country: 'DE',
  device: 'mobile',
  os: 'iOS',
  browser: 'Mobile Safari',
  visitor_id: visitor(1),
  ...over,
})

/** A scan event as the resolver publishes it. */
export const event = (n: number, over: Partial<ScanEvent> = {}): ScanEvent => ({
  scan_id: `evt-${n.toString().padStart(5, '0')}`,
  code: 'Code0001',
  scanned_at: T0,
  user_agent: UA.iphone,
  visitor_id: visitor(1),
  country: 'DE',
  ...over,
})

export const alice: Principal = { account_id: 'acct_a', key_id: 'key_a', scope: 'personal', team_id: null, role: 'owner' }
export const bob: Principal = { account_id: 'acct_b', key_id: 'key_b', scope: 'personal', team_id: null, role: 'owner' }

/** A hand-written CodeDirectory: account id -> its codes, oldest first; `deleted` ones are soft-deleted. A page's cursor is its first code's index. */
export function fakeDirectory(codes: Record<string, { code: string; deleted?: boolean }[]>): CodeDirectory & { asked: number } {
  const of = (p: Principal) => codes[p.account_id] ?? []
  const directory = {
    asked: 0,
    async liveCodes(p: Principal, { cursor, limit }: { cursor: string | null; limit: number }) {
      directory.asked++
      const start = Number(cursor ?? 0)
      const live = of(p).filter((c) => !c.deleted).map((c) => c.code)
      return { codes: live.slice(start, start + limit), next_cursor: start + limit < live.length ? String(start + limit) : null }
    },
    async find(p: Principal, code: string) {
      directory.asked++
      const found = of(p).find((c) => c.code === code)
      return found ? { code, deleted: Boolean(found.deleted) } : null
    },
  }
  return directory
}

/** Awaits a rejection and returns it as the wire form: code, message and details together. */
export async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(AppError)
  return (error as AppError).toWire()
}
