import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Database } from 'bun:sqlite'
import { AppError, IDEMPOTENCY_TTL_S, type KeyClaims, loadConfig } from '@lr/proto'
import { openKeyClaims } from '@lr/platform/key-claims'
import { captureLog } from './log-capture'
import { sqliteKeyClaims } from '@lr/platform/idempotency-sqlite'
import { idempotent } from '@lr/platform/idempotency'
import { openSqlite } from '@lr/platform/sqlite'

const NOW = 1_800_000_000
const SINCE = NOW - IDEMPOTENCY_TTL_S

// Two connections to one file: the records and the dynamic service, in one process or two.
describe('sqliteKeyClaims', () => {
  let dir: string
  let dbs: Database[]
  let records: KeyClaims
  let dynamic: KeyClaims
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'lr-claims-'))
    dbs = [openSqlite(join(dir, 'idempotency.sqlite')), openSqlite(join(dir, 'idempotency.sqlite'))]
    ;[records, dynamic] = dbs.map(sqliteKeyClaims) as [KeyClaims, KeyClaims]
  })
  afterEach(() => {
    for (const db of dbs) db.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('gives a free key to its first claim, and answers every later claim with that fingerprint', async () => {
    expect(await records.claim('key_a', 'k', 'static', NOW, SINCE)).toBe('static')
    expect(await dynamic.claim('key_a', 'k', 'dynamic', NOW + 1, SINCE + 1)).toBe('static')
    expect(await records.claim('key_a', 'k', 'static', NOW + 2, SINCE + 2)).toBe('static')
  })

  it('keeps keys per scope', async () => {
    await records.claim('key_a', 'k', 'static', NOW, SINCE)
    expect(await dynamic.claim('key_b', 'k', 'dynamic', NOW, SINCE)).toBe('dynamic')
  })

  it('hands an expired key to the next claim', async () => {
    await records.claim('key_a', 'k', 'static', NOW - IDEMPOTENCY_TTL_S - 1, SINCE - IDEMPOTENCY_TTL_S - 1)
    expect(await dynamic.claim('key_a', 'k', 'dynamic', NOW, SINCE)).toBe('dynamic')
    expect(await records.claim('key_a', 'k', 'static', NOW, SINCE)).toBe('dynamic')
  })
})

describe('idempotent with key claims', () => {
  const noReceipts = { findReceipt: async () => null }
  const request = { scope: 'key_a', key: 'k', route: 'dynamic.create', body: { a: 1 }, now: NOW }

  it('answers 422 without creating when another request holds the key', async () => {
    const claims: KeyClaims = { claim: async () => 'another request' }
    let runs = 0
    const error = await idempotent(noReceipts, request, async () => ++runs, claims).catch((e) => e)
    expect([error.status, error.message, runs]).toEqual([422, 'this Idempotency-Key was already used with a different request', 0])
  })

  it('creates when the claim is its own', async () => {
    const claims: KeyClaims = { claim: async (_scope, _key, fingerprint) => fingerprint }
    expect(await idempotent(noReceipts, request, async () => 'created', claims)).toBe('created')
  })
})

describe('openKeyClaims', () => {
  it('answers a claim on a file locked past the busy timeout as the store unreachable (503, Retry-After), not a 500', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-claims-'))
    const keys = openKeyClaims(loadConfig({ DATA_DIR: dir }))
    const other = new Database(join(dir, 'idempotency.sqlite'))
    const log = captureLog()
    try {
      other.exec('BEGIN EXCLUSIVE')
      const error = await keys.claims!.claim('key_a', 'k', 'static', NOW, SINCE).then(() => 'claimed', (e: unknown) => e)
      expect(error).toBeInstanceOf(AppError)
      expect([(error as AppError).code, (error as AppError).status, (error as AppError).details?.retryAfter]).toEqual(['unavailable', 503, 1])
      expect(log.lines).toEqual([expect.objectContaining({ msg: 'store unreachable', store: 'idempotency', operation: 'claim' })])
      other.exec('ROLLBACK')
      expect(await keys.claims!.claim('key_a', 'k', 'static', NOW, SINCE)).toBe('static')
    } finally {
      log.restore()
      other.close()
      keys.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 20_000)
})

// A DATA_DIR of a release before idempotency.sqlite (e2a8ed0): each service kept its answers
// in its own file, claimed nowhere. Upgraded, such a key was free on every other route for a
// day: a probe's retry of a static create's key on POST /v1/dynqrcodes created a code (201),
// where README "Idempotent POSTs" answers 422.
describe('openKeyClaims on a DATA_DIR from before the shared register', () => {
  /** A service's file with its receipts table as the releases before wrote it, and `rows` in it. */
  function earlierStore(path: string, rows: [scope: string, key: string, fingerprint: string, createdAt: number][]) {
    const db = new Database(path, { create: true })
    db.exec(`PRAGMA journal_mode = WAL;
CREATE TABLE receipts (scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, response TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (scope, key));
CREATE INDEX receipts_created_at ON receipts (created_at);`)
    for (const row of rows) db.query('INSERT INTO receipts VALUES (?, ?, ?, \'{"created":[]}\', ?)').run(row[0], row[1], row[2], row[3])
    db.close()
  }

  it('claims the keys of the answers kept within the day, once, when it makes the register', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-claims-upgrade-'))
    const now = Math.floor(Date.now() / 1000)
    earlierStore(join(dir, 'records.sqlite'), [['key_a', 'static-key', 'static create', now - 60], ['key_a', 'old-key', 'static create', now - IDEMPOTENCY_TTL_S - 60]])
    earlierStore(join(dir, 'dynamic.sqlite'), [['key_a', 'dynamic-key', 'dynamic create', now - 60]])
    try {
      const keys = openKeyClaims(loadConfig({ DATA_DIR: dir }))
      const since = now - IDEMPOTENCY_TTL_S
      expect(await keys.claims!.claim('key_a', 'static-key', 'dynamic create', now, since)).toBe('static create')
      expect(await keys.claims!.claim('key_a', 'dynamic-key', 'static create', now, since)).toBe('dynamic create')
      // Expired answers claim nothing; keys stay per scope.
      expect(await keys.claims!.claim('key_a', 'old-key', 'dynamic create', now, since)).toBe('dynamic create')
      expect(await keys.claims!.claim('key_b', 'static-key', 'dynamic create', now, since)).toBe('dynamic create')
      keys.close()
      // Made once: an answer written after it (its claim came first) is not claimed again at the next open.
      earlierStore(join(dir, 'webhooks.sqlite'), [['key_a', 'late-key', 'webhook create', now]])
      const again = openKeyClaims(loadConfig({ DATA_DIR: dir }))
      expect(await again.claims!.claim('key_a', 'late-key', 'static create', now, since)).toBe('static create')
      again.close()
      // Nothing was made beside the files that were there.
      expect(readdirSync(dir).filter((f) => f.endsWith('.sqlite')).sort()).toEqual(['dynamic.sqlite', 'idempotency.sqlite', 'records.sqlite', 'webhooks.sqlite'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a fresh DATA_DIR: makes no store file beside the register', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-claims-fresh-'))
    try {
      openKeyClaims(loadConfig({ DATA_DIR: dir })).close()
      expect(readdirSync(dir).filter((f) => f.endsWith('.sqlite'))).toEqual(['idempotency.sqlite'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
