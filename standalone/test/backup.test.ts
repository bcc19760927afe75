import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { adminOf } from '../../test/harness/stack'
import { servingOn } from './serving'

const ROOT = join(import.meta.dir, '..', '..')
const UNLIMITED = { LIMIT_PERSONAL_DAILY: '100000000', LIMIT_PERSONAL_PER_SECOND: '100000', LIMIT_PERSONAL_BURST: '100000', RESOLVER_THREADS: '0' }
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120 Safari/537.36'

/** `bun run backup` with `args` on `dataDir`: its exit code, stdout and stderr. */
async function backup(dataDir: string, ...args: string[]) {
  const proc = Bun.spawn(['bun', 'run', '--silent', 'backup', ...args], { cwd: ROOT, env: { ...Bun.env, DATA_DIR: dataDir }, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, out, err: err.trim() }
}

/** Rows of one query on a file of the copy, opened read-only. */
function rows<T>(path: string, sql: string): T[] {
  const db = new Database(path, { readonly: true })
  try {
    return db.query<T, []>(sql).all()
  } finally {
    db.close()
  }
}

// README "Operations", "Backup and restore": a copy of DATA_DIR taken while bun start writes.
// A file copy (cp -a) under writes had given corrupt copies (the database file and its WAL read
// at different moments: "wrong # of entries in index", receipts without their records).
describe('bun run backup while bun start writes', () => {
  const root = mkdtempSync(join(tmpdir(), 'lr-backup-'))
  const dataDir = join(root, 'data')
  const copy = join(root, 'copy')
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('copies every store, each whole and one moment, with the keys, answers, claims and scans of its records; a start on the copy serves them', async () => {
    const { admin } = adminOf({ ...Bun.env, DATA_DIR: dataDir } as Record<string, string>)
    const { account_id } = await admin('account', 'create', '--email', 'backup@example.com', '--tier', 'pro')
    const { key } = await admin('key', 'create', '--account', account_id, '--scope', 'personal')
    const server = await servingOn(dataDir, UNLIMITED)
    const api = `http://127.0.0.1:${server.port}`
    const sent: { path: string; key: string; body: object }[] = []
    const codes: string[] = []
    let writing = true
    const create = async (i: number) => {
      const dynamic = i % 2 === 0
      const path = dynamic ? '/v1/dynqrcodes' : '/v1/qrcodes'
      const body = dynamic ? { destination_url: `https://d${i}.example/`, name: `D${i}` } : { url: `https://s${i}.example/`, name: `S${i}` }
      const response = await fetch(api + path, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': `k-${i}` }, body: JSON.stringify(body) })
      const answer = (await response.json()) as { created: { code?: string }[] }
      expect(response.status).toBe(201)
      sent.push({ path, key: `k-${i}`, body })
      if (dynamic) codes.push(answer.created[0]!.code!)
    }
    let next = 0
    const writers = [0, 1, 2, 3].map(async () => {
      while (writing) await create(next++)
    })
    const scanners = [0, 1].map(async () => {
      while (writing) {
        if (codes.length === 0) {
          await Bun.sleep(5)
          continue
        }
        const code = codes[Math.floor(Math.random() * codes.length)]
        await (await fetch(`http://127.0.0.1:${server.shortPort}/${code}`, { redirect: 'manual', headers: { 'user-agent': BROWSER } })).text()
      }
    })
    try {
      while (next < 300) await Bun.sleep(20)
      const made = await backup(dataDir, '--to', copy)
      expect({ code: made.code, err: made.err }).toEqual({ code: 0, err: '' })
      const files = (JSON.parse(made.out) as { files: { file: string }[] }).files.map((f) => f.file)
      expect(files).toEqual(['analytics.sqlite', 'records.sqlite', 'dynamic.sqlite', 'webhooks.sqlite', 'idempotency.sqlite', 'auth.sqlite'])
    } finally {
      writing = false
      await Promise.all([...writers, ...scanners])
      server.proc.kill('SIGTERM')
      await server.proc.exited
    }
    // Only the stores: no spool, no lock, no WAL left beside a file.
    expect(readdirSync(copy).sort()).toEqual(['analytics.sqlite', 'auth.sqlite', 'dynamic.sqlite', 'idempotency.sqlite', 'records.sqlite', 'webhooks.sqlite'])
    for (const file of readdirSync(copy)) expect(rows<{ integrity_check: string }>(join(copy, file), 'PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }])
    // Every kept answer has its records (one transaction), and its key's claim (copied after them).
    const statics = new Set(rows<{ qr_id: string }>(join(copy, 'records.sqlite'), 'SELECT qr_id FROM static_records').map((r) => r.qr_id))
    const dynamics = new Set(rows<{ code: string }>(join(copy, 'dynamic.sqlite'), 'SELECT code FROM dynamic_codes').map((r) => r.code))
    const answered = (file: string, field: string) =>
      rows<{ key: string; id: string }>(join(copy, file), `SELECT key, json_extract(response, '$.created[0].${field}') AS id FROM receipts`)
    const staticAnswers = answered('records.sqlite', 'qr_id')
    const dynamicAnswers = answered('dynamic.sqlite', 'code')
    expect(staticAnswers.length + dynamicAnswers.length).toBeGreaterThanOrEqual(300)
    expect(staticAnswers.filter((a) => !statics.has(a.id))).toEqual([])
    expect(dynamicAnswers.filter((a) => !dynamics.has(a.id))).toEqual([])
    const claimed = new Set(rows<{ key: string }>(join(copy, 'idempotency.sqlite'), 'SELECT key FROM key_claims').map((r) => r.key))
    expect([...staticAnswers, ...dynamicAnswers].filter((a) => !claimed.has(a.key))).toEqual([])
    // The scans and their counts are one state, each scan of a code the copy has.
    const [scans] = rows<{ raw: number; counted: number }>(join(copy, 'analytics.sqlite'), 'SELECT (SELECT count(*) FROM scans) AS raw, (SELECT coalesce(sum(scans), 0) FROM code_totals) AS counted')
    expect(scans!.raw).toBeGreaterThan(0)
    expect(scans!.raw).toBe(scans!.counted)
    expect(rows<{ code: string }>(join(copy, 'analytics.sqlite'), 'SELECT DISTINCT code FROM scans').filter((r) => !dynamics.has(r.code))).toEqual([])

    // Restored: bun start on the copy serves the records, and a retry of a kept request replays its answer.
    const restored = await servingOn(copy, UNLIMITED)
    try {
      const api = `http://127.0.0.1:${restored.port}`
      const page = (await (await fetch(`${api}/v1/qrcodes?limit=1000`, { headers: { 'x-api-key': key } })).json()) as { qrcodes: unknown[] }
      expect(page.qrcodes.length).toBe(statics.size)
      const kept = sent.find((s) => s.path === '/v1/dynqrcodes' && dynamicAnswers.some((a) => a.key === s.key))!
      const retry = await fetch(api + kept.path, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': kept.key }, body: JSON.stringify(kept.body) })
      const replayed = (await retry.json()) as { created: { code: string }[] }
      expect({ status: retry.status, code: replayed.created[0]!.code }).toEqual({ status: 201, code: dynamicAnswers.find((a) => a.key === kept.key)!.id })
      const summary = (await (await fetch(`${api}/v1/dynqrcodes/analytics`, { headers: { 'x-api-key': key } })).json()) as { analytics: { total_scans: number }[] }
      expect(summary.analytics.reduce((sum, c) => sum + c.total_scans, 0)).toBe(scans!.raw)
    } finally {
      restored.proc.kill('SIGTERM')
      await restored.proc.exited
    }
  }, 90_000)

  it('refuses a directory that exists (exit 1) and a command line without --to (exit 2), one line each, copying nothing', async () => {
    expect(await backup(dataDir, '--to', copy)).toEqual({ code: 1, out: '', err: `[backup] cannot back up: ${copy} exists: give a new directory to copy into` })
    expect(await backup(dataDir, '--to', join(dataDir, 'inside'))).toEqual({ code: 1, out: '', err: `[backup] cannot back up: ${join(dataDir, 'inside')} is inside DATA_DIR (${dataDir}): give a directory outside it` })
    expect(await backup(dataDir)).toEqual({ code: 2, out: '', err: '[backup] usage: bun run backup --to DIR (a new directory; DATA_DIR and STORE as for bun start)' })
    expect(existsSync(join(dataDir, 'inside'))).toBe(false)
  }, 30_000)
})
