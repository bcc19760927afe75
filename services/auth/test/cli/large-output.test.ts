import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteAuthStore } from '../../src/adapters/auth-store.sqlite'
import { createAuthService, epochSeconds } from '../../src/service'
import { ROOT } from './run-cli'

const dataDir = mkdtempSync(join(tmpdir(), 'lr-auth-cli-large-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

// An answer larger than a pipe's buffer (64 KiB): `account list --limit 1000`, the `key list` of
// an account that rotates its key nightly, the `team show` of a large team. Piped (to jq, to a
// file through a script), it came out as its first 64 KiB and then the whole of it again, or cut
// short: pino's default destination on stdout, which the command line made for its silent
// logger, broke Bun's write of the answer there (about half of the runs in a probe).
describe('bun run admin, an answer larger than a pipe holds', () => {
  it('prints account list --limit 1000 as one whole JSON object, every time', async () => {
    const store = createSqliteAuthStore(openSqlite(join(dataDir, 'auth.sqlite')))
    const service = createAuthService({ store, now: epochSeconds, activationDelayS: 0 })
    for (let i = 0; i < 1000; i++) await service.accountCreate({ email: `reader${String(i).padStart(4, '0')}@example.com`, tier: 'pro' })
    await store.close()
    // As an operator pipes it into jq: a reader that comes a moment later, so the pipe fills.
    const piped = async () => {
      const proc = Bun.spawn(['sh', '-c', 'bun run --silent admin account list --limit 1000 | { sleep 0.3; cat; }'], {
        cwd: ROOT, env: { ...process.env, TRANSPORT: 'memory', STORE: 'sqlite', DATA_DIR: dataDir }, stdout: 'pipe', stderr: 'pipe',
      })
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
      return { stdout, stderr, code }
    }
    for (let round = 0; round < 3; round++) {
      for (const r of await Promise.all([piped(), piped(), piped()])) {
        expect([r.code, r.stderr, r.stdout.length > 128 * 1024, r.stdout.endsWith('}\n')]).toEqual([0, '', true, true])
        expect(JSON.parse(r.stdout).accounts).toHaveLength(1000)
      }
    }
  }, 60_000)
})
