import { expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// Records and dynamic open the shared key-claims file at the same moment when a deployment
// starts (TRANSPORT=nats, STORE=sqlite): neither may fail with "database is locked".
it('opens one new SQLite file from several processes at once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lr-sqlite-open-'))
  try {
    for (let round = 0; round < 5; round++) {
      const file = join(dir, `shared-${round}.sqlite`)
      const script = `import { openSqlite } from '@lr/platform/sqlite'
const db = openSqlite(${JSON.stringify(file)})
db.exec('CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY)')
db.close()`
      const runs = Array.from({ length: 6 }, () => Bun.spawn(['bun', '-e', script], { cwd: import.meta.dir, stderr: 'pipe' }))
      const codes = await Promise.all(runs.map((p) => p.exited))
      const errors = await Promise.all(runs.map((p) => new Response(p.stderr).text()))
      expect({ codes, errors: errors.filter(Boolean) }).toEqual({ codes: codes.map(() => 0), errors: [] })
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}, 30_000)
