/**
 * A throwaway MongoDB-compatible server for the Mongo contract suites: FerretDB with its SQLite
 * backend in a temp dir, on a free port, killed and removed by stop(). MONGODB_URL, when set,
 * points the suites at a real MongoDB instead (README "MongoDB compatibility").
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'bun:test'
import type { Subprocess } from 'bun'
import type { Connection } from 'mongoose'
import { connectMongo } from '@lr/platform/mongo'
import { freePort, waitForPort } from './ports'
import { skipReason } from './servers'
import { stopProcess } from './stop-process'

export interface MongoServer {
  url: string
  /** Its process, for a test that freezes it (SIGSTOP) and lets it go on (SIGCONT). */
  pid?: number
  /** Kills the server and removes its data. */
  stop(): Promise<void>
}

/**
 * `auth`: the server requires this user (FerretDB's SCRAM authentication, made at start with its
 * database); `url` carries the user and password, percent-encoded, with that database as authSource.
 */
export async function startFerretDb(options: { auth?: { user: string; password: string; database: string } } = {}): Promise<MongoServer> {
  const { auth } = options
  const binary = Bun.which('ferretdb')
  if (!binary) throw new Error('ferretdb is not on PATH; .ci/setup builds it')
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'lr-ferretdb-'))
  const proc: Subprocess = Bun.spawn(
    [
      binary,
      '--handler=sqlite',
      // Throwaway data: no fsync per write, which would make FerretDB's SQLite several times slower.
      `--sqlite-url=file:${dir}/?_pragma=synchronous(OFF)`,
      `--state-dir=${dir}`,
      `--listen-addr=127.0.0.1:${port}`,
      // No debug HTTP listener: its fixed default port would stop a second instance starting.
      '--debug-addr=-',
      '--telemetry=disable',
      '--log-level=error',
      ...(auth ? ['--test-enable-new-auth', `--setup-database=${auth.database}`, `--setup-username=${auth.user}`, `--setup-password=${auth.password}`] : []),
    ],
    { stdout: 'ignore', stderr: 'pipe' },
  )
  try {
    await waitForPort(port)
  } catch (error) {
    proc.kill('SIGKILL')
    const stderr = await new Response(proc.stderr as ReadableStream).text()
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`${(error as Error).message}\n${stderr}`)
  }
  return {
    url: auth
      ? `mongodb://${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.password)}@127.0.0.1:${port}/${auth.database}?authSource=${auth.database}`
      : `mongodb://127.0.0.1:${port}/`,
    pid: proc.pid,
    async stop() {
      proc.kill('SIGCONT') // a frozen server would not end on SIGTERM
      await stopProcess(proc)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * Why a Mongo suite cannot run here, or null: MONGODB_URL set, or ferretdb installed. Under
 * CI=true a missing ferretdb throws (servers.ts), so the suite fails instead of skipping.
 */
export function mongoSkipReason(): string | null {
  if (Bun.env.MONGODB_URL) return null
  const reason = skipReason('ferretdb')
  return reason && `${reason.replace(/ \(apt-get.*\)$/, '')} (run .ci/setup, or set MONGODB_URL to a MongoDB server)`
}

/**
 * For the enclosing describe: the URL of a MongoDB-compatible server, MONGODB_URL or else a
 * FerretDB started before its tests and stopped after them. Read the URL inside hooks and tests.
 */
export function useMongoServer(): () => string {
  let server: MongoServer | undefined
  const external = Bun.env.MONGODB_URL
  beforeAll(async () => {
    if (!external) server = await startFerretDb()
  })
  afterAll(async () => {
    await server?.stop()
  })
  return () => external ?? server!.url
}

/** A fresh, uniquely named database on the server at `url`, and how to drop it again. */
export async function freshDatabase(url: string, prefix: string): Promise<{ conn: Connection; cleanup(): Promise<void> }> {
  const base = await connectMongo(url)
  const conn = base.useDb(`${prefix}_${crypto.randomUUID().slice(0, 8)}`, { useCache: false })
  return {
    conn,
    async cleanup() {
      await conn.dropDatabase()
      await base.close()
    },
  }
}
