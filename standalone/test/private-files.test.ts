import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { adminOf } from '../../test/harness/stack'
import { servingOn } from './serving'

const ROOT = join(import.meta.dir, '..', '..')

/** Every directory and file under `dir` (itself included) whose mode lets its group or others in, as `path mode`. */
function openToOthers(dir: string): string[] {
  const open: string[] = []
  const visit = (path: string) => {
    const stat = statSync(path)
    if (stat.mode & 0o077) open.push(`${relative(dir, path) || '.'} ${(stat.mode & 0o777).toString(8)}`)
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
  }
  visit(dir)
  return open
}

// platform/src/lifecycle.ts keepFilesPrivate: the stores hold account emails, webhook signing
// secrets and scans. Under the test runner's umask (022) they had been 0644 and DATA_DIR 0755.
describe('what bun start, the admin command line and bun run backup write', () => {
  const root = mkdtempSync(join(tmpdir(), 'lr-private-'))
  const dataDir = join(root, 'data')
  const copy = join(root, 'copy')
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('is readable by its own user only: DATA_DIR and its directories 0700, every store, WAL, spool and lock 0600, and the backup alike', async () => {
    expect(process.umask() & 0o077).not.toBe(0o077) // the runner's own umask would not make them private
    const { admin } = adminOf({ ...Bun.env, DATA_DIR: dataDir } as Record<string, string>)
    const { account_id } = await admin('account', 'create', '--email', 'private@example.com', '--tier', 'pro')
    const { key } = await admin('key', 'create', '--account', account_id, '--scope', 'personal')
    expect(openToOthers(dataDir)).toEqual([])

    const server = await servingOn(dataDir, { RESOLVER_THREADS: '0', WEBHOOKS_ALLOW_PRIVATE: '1' })
    try {
      const api = `http://127.0.0.1:${server.port}`
      const headers = { 'x-api-key': key, 'content-type': 'application/json' }
      const hook = await fetch(`${api}/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: 'http://127.0.0.1:9/lr', events: ['scan'] }) })
      expect(hook.status).toBe(201)
      const made = await fetch(`${api}/v1/dynqrcodes`, { method: 'POST', headers, body: JSON.stringify({ destination_url: 'https://example.com/', name: 'Private' }) })
      const { created } = (await made.json()) as { created: { code: string }[] }
      expect((await fetch(`http://127.0.0.1:${server.shortPort}/${created[0]!.code}`, { redirect: 'manual' })).status).toBe(302)
      const files = readdirSync(dataDir, { recursive: true }).map(String)
      expect(files).toEqual(expect.arrayContaining(['auth.sqlite', 'auth.sqlite-wal', 'webhooks.sqlite', 'dynamic.sqlite', 'analytics.sqlite', 'scan-spool']))
      expect(openToOthers(dataDir)).toEqual([])

      const backup = Bun.spawn(['bun', 'run', '--silent', 'backup', '--to', copy], { cwd: ROOT, env: { ...Bun.env, DATA_DIR: dataDir }, stdout: 'ignore', stderr: 'pipe' })
      expect([await backup.exited, await new Response(backup.stderr).text()]).toEqual([0, ''])
      expect(readdirSync(copy)).toContain('webhooks.sqlite')
      expect(openToOthers(copy)).toEqual([])
    } finally {
      server.proc.kill('SIGTERM')
      await server.proc.exited
    }
    expect(openToOthers(dataDir)).toEqual([])
  })
})
