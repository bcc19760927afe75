import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Subprocess } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT, runCli } from './cli/run-cli'
import { skipReason } from '../../../test/harness/servers'

// Under CI=true a missing nats-server fails the file (skipReason throws) instead of skipping it.
const skip = skipReason('nats-server')

function freePort(): number {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = server.port!
  server.stop(true)
  return port
}

async function waitForPort(port: number, ms = 5_000) {
  const open = () =>
    Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } }).then((socket) => (socket.end(), true), () => false)
  for (const deadline = Date.now() + ms; !(await open()); await Bun.sleep(50))
    if (Date.now() > deadline) throw new Error(`nothing listens on ${port}`)
}

/** Resolves once the process has printed `text` on stdout; rejects after `ms`. */
async function waitForOutput(proc: Subprocess<'ignore', 'pipe', 'inherit'>, text: string, ms = 10_000) {
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let seen = ''
  const deadline = Date.now() + ms
  while (!seen.includes(text)) {
    if (Date.now() > deadline) throw new Error(`no "${text}" in: ${seen}`)
    const { value, done } = await reader.read()
    if (done) throw new Error(`process ended before "${text}": ${seen}`)
    seen += decoder.decode(value)
  }
  reader.releaseLock()
}

// The separate-process deployment: nats-server, the auth process (src/main.ts), the CLI over NATS.
describe.skipIf(skip !== null)(`auth process over NATS${skip ? ` (${skip})` : ''}`, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'lr-auth-nats-'))
  const port = freePort()
  const env = { TRANSPORT: 'nats', NATS_URL: `nats://127.0.0.1:${port}`, DATA_DIR: dataDir }
  let nats: Subprocess
  let auth: Subprocess<'ignore', 'pipe', 'inherit'> | undefined

  beforeAll(async () => {
    nats = Bun.spawn(['nats-server', '-a', '127.0.0.1', '-p', String(port)], { stdout: 'ignore', stderr: 'ignore' })
    await waitForPort(port)
  })
  afterAll(async () => {
    auth?.kill()
    nats.kill()
    await nats.exited
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('exits 1 saying no service answers while no auth process runs', async () => {
    const r = await runCli(['account', 'create', '--email', 'a@example.com', '--tier', 'pro'], env)
    expect([r.code, r.err]).toEqual([1, { error: 'no service answers auth.v1.account.create' }])
  })

  it('serves the admin command line once the auth process is up', async () => {
    auth = Bun.spawn(['bun', 'run', 'services/auth/src/main.ts'], { cwd: ROOT, env: { ...process.env, STORE: 'sqlite', ...env }, stdout: 'pipe', stderr: 'inherit' })
    await waitForOutput(auth, '"msg":"serving on')
    const account = await runCli(['account', 'create', '--email', 'a@example.com', '--tier', 'pro'], env)
    const key = await runCli(['key', 'create', '--account', account.out.account_id, '--scope', 'personal'], env)
    expect([account.code, key.code, key.out.key]).toEqual([0, 0, expect.stringMatching(/^lrp_/)])
  })

  it('answers account show, account list, team show and named keys over NATS', async () => {
    const boss = await runCli(['account', 'create', '--email', 'boss@example.com', '--tier', 'business'], env)
    const shown = await runCli(['account', 'show', '--email', 'boss@example.com'], env)
    expect([shown.code, shown.out]).toEqual([0, boss.out])
    const list = await runCli(['account', 'list'], env)
    expect([list.code, list.out.accounts.map((a: { email: string }) => a.email), list.out.next_cursor]).toEqual([0, ['a@example.com', 'boss@example.com'], null])
    const team = await runCli(['team', 'create', '--name', 'Ops', '--admin', boss.out.account_id], env)
    const details = await runCli(['team', 'show', 'Ops'], env)
    expect([details.code, details.out]).toEqual([0, { ...team.out, members: [{ account_id: boss.out.account_id, email: 'boss@example.com', role: 'admin' }] }])
    const key = await runCli(['key', 'create', '--account', boss.out.account_id, '--scope', 'business', '--team', team.out.team_id, '--name', 'CI'], env)
    const keys = await runCli(['key', 'list', '--account', boss.out.account_id], env)
    expect([key.code, key.out.name, keys.out.keys.map((k: { name: string }) => k.name)]).toEqual([0, 'CI', ['CI']])
    const missing = await runCli(['team', 'show', 'Nobody'], env)
    expect([missing.code, missing.stdout, missing.err]).toEqual([1, '', { error: 'no team with id or name "Nobody"' }])
  }, 30_000) // seven CLI processes, each a Bun start-up: seconds on a loaded machine

  it('exits 0 on SIGTERM', async () => {
    auth!.kill('SIGTERM')
    expect(await auth!.exited).toBe(0)
  })
})
