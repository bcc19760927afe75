import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { runToExit } from '../../test/harness/exit'
import { mongoSkipReason, startFerretDb } from '../../test/harness/ferretdb'
import { freePort } from '../../test/harness/ports'
import { servingOn } from './serving'

// README "Operations", "Start-up": a process that cannot start says what and where in one line
// and exits 1. SQLite's own words ("file is not a database") had named no file.
describe('bun start on a DATA_DIR it cannot use', () => {
  const root = mkdtempSync(join(tmpdir(), 'lr-start-data-'))
  afterAll(() => rmSync(root, { recursive: true, force: true }))
  /** A fresh DATA_DIR under the test's directory, `prepare`d, and bun start's exit on it. */
  async function startOn(name: string, prepare: (dataDir: string) => void = () => undefined) {
    const dataDir = join(root, name)
    prepare(dataDir)
    return runToExit('standalone/src/main.ts', { DATA_DIR: dataDir, PORT: String(await freePort()), SHORT_PORT: String(await freePort()) })
  }
  const cannotStart = (reason: string) => [1, [`[standalone] cannot start: ${reason}`]]

  it('DATA_DIR a regular file: one line naming it, exit 1', async () => {
    const dataDir = join(root, 'a-file')
    const { code, lines } = await startOn('a-file', () => writeFileSync(dataDir, 'x'))
    expect([code, lines]).toEqual(cannotStart(`DATA_DIR (${dataDir}) cannot be made: ${dataDir} is a file, not a directory (EEXIST)`))
  })

  it('DATA_DIR under a regular file: one line naming DATA_DIR, exit 1', async () => {
    writeFileSync(join(root, 'parent'), 'x')
    const { code, lines } = await startOn('parent/data')
    expect([code, lines]).toEqual(cannotStart(`DATA_DIR (${join(root, 'parent/data')}) cannot be made: a part of its path is a file, not a directory (ENOTDIR)`))
  })

  it('a store file that is no SQLite database: one line naming the file, exit 1', async () => {
    const dataDir = join(root, 'not-a-database')
    const { code, lines } = await startOn('not-a-database', () => {
      mkdirSync(dataDir)
      writeFileSync(join(dataDir, 'records.sqlite'), 'a spreadsheet, say '.repeat(100))
    })
    expect([code, lines]).toEqual(cannotStart(`${dataDir}/records.sqlite is not a SQLite database (file is not a database): move it away, or set DATA_DIR to the directory of this product's files`))
  })

  it('a damaged store file: one line naming the file, exit 1', async () => {
    const dataDir = join(root, 'damaged')
    const path = join(dataDir, 'records.sqlite')
    const { code, lines } = await startOn('damaged', () => {
      mkdirSync(dataDir)
      const db = new Database(path)
      for (let i = 0; i < 200; i++) db.exec(`CREATE TABLE t${i} (a TEXT)`)
      db.close()
      // The schema spans pages past the first; those overwritten, the file opens but its tables cannot be read.
      const bytes = readFileSync(path)
      bytes.fill(0x55, 4096)
      writeFileSync(path, bytes)
    })
    expect([code, lines]).toEqual(cannotStart(`${path} is damaged (database disk image is malformed): restore it from a backup`))
  })

  it('a directory where a store file should be: one line naming it, exit 1', async () => {
    const dataDir = join(root, 'directory')
    const { code, lines } = await startOn('directory', () => mkdirSync(join(dataDir, 'webhooks.sqlite'), { recursive: true }))
    expect([code, lines]).toEqual(cannotStart(`${dataDir}/webhooks.sqlite is a directory, not a SQLite file (unable to open database file): move it away`))
  })
})

describe('two bun start on one DATA_DIR', () => {
  const ROOT = join(import.meta.dir, '..', '..')
  const dataDir = mkdtempSync(join(tmpdir(), 'lr-start-twice-'))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))
  /** A bun start on dataDir, once it answers /readyz. */
  const serving = (settings: Record<string, string> = {}) => servingOn(dataDir, settings)
  const second = async (settings: Record<string, string> = {}) => runToExit('standalone/src/main.ts', { DATA_DIR: dataDir, ...settings, PORT: String(await freePort()), SHORT_PORT: String(await freePort()) })

  it('refuses the second in one line naming DATA_DIR, exit 1; the first serves on, and the admin command line still opens its store', async () => {
    const first = await serving()
    try {
      const { code, lines } = await second()
      expect([code, lines]).toEqual([1, [`[standalone] cannot start: another bun start runs on DATA_DIR (${dataDir}): it holds ${dataDir}/standalone.lock; stop it, or give this one a DATA_DIR of its own`]])
      expect(await first.ready()).toBe(true)
      const admin = Bun.spawn(['bun', 'run', '--silent', 'admin', 'account', 'create', '--email', 'one@example.com', '--tier', 'pro'], { cwd: ROOT, env: { ...Bun.env, DATA_DIR: dataDir }, stdout: 'pipe', stderr: 'pipe' })
      const [out, err, exit] = await Promise.all([new Response(admin.stdout).text(), new Response(admin.stderr).text(), admin.exited])
      expect({ exit, err, email: JSON.parse(out || '{}').email }).toEqual({ exit: 0, err: '', email: 'one@example.com' })
    } finally {
      first.proc.kill('SIGTERM')
      await first.proc.exited
    }
  }, 40_000)

  /** The first bun start with `settings`, serving; then the second's exit and lines with `others`; then the first stopped. */
  async function secondBeside(settings: Record<string, string>, others: Record<string, string>) {
    const first = await serving(settings)
    try {
      const refused = await second(others)
      expect(await first.ready()).toBe(true)
      return refused
    } finally {
      first.proc.kill('SIGTERM')
      await first.proc.exited
    }
  }

  it.skipIf(Boolean(mongoSkipReason()))('on MongoDB too (the scan spools are under DATA_DIR): the second is refused, exit 1', async () => {
    const mongo = await startFerretDb()
    try {
      const settings = { STORE: 'mongo', MONGODB_URL: `${mongo.url}lr_start_twice` }
      const { code, lines } = await secondBeside(settings, settings)
      expect([code, lines]).toEqual([1, [`[standalone] cannot start: another bun start runs on DATA_DIR (${dataDir}): it holds ${dataDir}/standalone.lock; stop it, or give this one a DATA_DIR of its own`]])
    } finally {
      await mongo.stop()
    }
  }, 60_000)

  // b69aa43 started there (nothing of it is written there); the lock on DATA_DIR had made it refuse
  // after an upgrade. A DATA_DIR under a regular file stands for one this process may not write.
  it.skipIf(Boolean(mongoSkipReason()))('on MongoDB with SCAN_SPOOL_DIR elsewhere, a DATA_DIR it cannot write: it serves, holding SCAN_SPOOL_DIR', async () => {
    const mongo = await startFerretDb()
    const spools = `${dataDir}-mongo-spools`
    writeFileSync(`${dataDir}-file`, '')
    try {
      const settings = { STORE: 'mongo', MONGODB_URL: `${mongo.url}lr_start_ro`, SCAN_SPOOL_DIR: spools, DATA_DIR: `${dataDir}-file/data` }
      const { code, lines } = await secondBeside(settings, settings)
      expect([code, lines]).toEqual([1, [`[standalone] cannot start: another bun start runs on SCAN_SPOOL_DIR (${spools}): it holds ${spools}/standalone.lock; stop it, or give this one a SCAN_SPOOL_DIR of its own`]])
    } finally {
      await mongo.stop()
      rmSync(spools, { recursive: true, force: true })
      rmSync(`${dataDir}-file`, { force: true })
    }
  }, 60_000)

  it('one SCAN_SPOOL_DIR outside two DATA_DIRs: the second is refused, naming SCAN_SPOOL_DIR, exit 1', async () => {
    const spools = join(dataDir, '..', `${basename(dataDir)}-spools`)
    try {
      const { code, lines } = await secondBeside({ SCAN_SPOOL_DIR: spools }, { SCAN_SPOOL_DIR: spools, DATA_DIR: `${dataDir}-other` })
      expect([code, lines]).toEqual([1, [`[standalone] cannot start: another bun start runs on SCAN_SPOOL_DIR (${spools}): it holds ${spools}/standalone.lock; stop it, or give this one a SCAN_SPOOL_DIR of its own`]])
    } finally {
      rmSync(spools, { recursive: true, force: true })
      rmSync(`${dataDir}-other`, { recursive: true, force: true })
    }
  }, 40_000)

  it('starts where the one before was killed (kill -9): the lock ends with its process', async () => {
    const killed = await serving()
    killed.proc.kill('SIGKILL')
    await killed.proc.exited
    const next = await serving()
    next.proc.kill('SIGTERM')
    expect(await next.proc.exited).toBe(0)
  }, 40_000)
})
