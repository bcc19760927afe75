import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect, RetentionPolicy } from 'nats'
import { scanBatchStreamConfig } from '@lr/platform/scan-stream-config'
import { ENTRY_POINTS } from '../deploy/entry-points'
import { type MongoServer, mongoSkipReason, startFerretDb } from './harness/ferretdb'
import { runToExit } from './harness/exit'
import { type NatsServer, startNats } from './harness/nats'
import { freePort, waitForPort, waitUntil } from './harness/ports'
import { skipReason } from './harness/servers'

/**
 * A process that cannot start says why in one line and exits 1 (docs/decisions.md §1): an
 * operator reads the cause, not a stack trace. Each case spawns the real entry point.
 */
const ROOT = join(import.meta.dir, '..')
const STANDALONE = 'standalone/src/main.ts'

const run = runToExit

/** Holds a port the way another program would. */
const occupy = (port: number) => Bun.serve({ port, hostname: '0.0.0.0', fetch: () => new Response('taken') })

const skip = skipReason('nats-server')
if (skip) describe.skip(`start-up failures (${skip})`, () => {})
else
  describe('start-up failures', () => {
    let nats: NatsServer
    let dataDir: string
    const unreachableNats = async () => `nats://127.0.0.1:${await freePort()}`
    beforeAll(async () => {
      nats = await startNats({ jetstream: true })
      dataDir = mkdtempSync(join(tmpdir(), 'lr-startup-'))
    })
    afterAll(async () => {
      await nats?.stop()
      rmSync(dataDir, { recursive: true, force: true })
    })

    it('bun start with TRANSPORT other than memory: one line naming the setting, exit 2, instead of running in memory unsaid', async () => {
      for (const transport of ['nats', 'udp']) {
        const { code, lines } = await run(STANDALONE, { DATA_DIR: dataDir, TRANSPORT: transport, PORT: String(await freePort()), SHORT_PORT: String(await freePort()) })
        expect([code, lines]).toEqual([2, [`[config] invalid setting TRANSPORT="${transport}": bun start runs every service in this process on the in-process bus (memory); the processes over NATS start with bun run start:nats`]])
      }
    })

    it('bun start with PORT taken, also by a listener that shares ports (another product): one line naming the port, exit 1', async () => {
      for (const reusePort of [false, true]) {
        const taken = Bun.serve({ port: await freePort(), hostname: '0.0.0.0', reusePort, fetch: () => new Response('taken') })
        try {
          const { code, lines } = await run(STANDALONE, { DATA_DIR: dataDir, PORT: String(taken.port), SHORT_PORT: String(await freePort()) })
          expect([code, lines]).toEqual([1, [`[standalone] cannot start: port ${taken.port} (PORT) is already in use`]])
        } finally {
          taken.stop(true)
        }
      }
    })

    it('bun start with SHORT_PORT taken, also by a listener that shares ports: one line naming it, exit 1', async () => {
      for (const reusePort of [false, true]) {
        const taken = Bun.serve({ port: await freePort(), hostname: '0.0.0.0', reusePort, fetch: () => new Response('taken') })
        try {
          const { code, lines } = await run(STANDALONE, { DATA_DIR: dataDir, PORT: String(await freePort()), SHORT_PORT: String(taken.port), RESOLVER_THREADS: '2' })
          expect([code, lines]).toEqual([1, [`[standalone] cannot start: port ${taken.port} (SHORT_PORT) is already in use`]])
        } finally {
          taken.stop(true)
        }
      }
    })

    it('every process of TRANSPORT=nats mode without TRANSPORT=nats: one line, exit 2, instead of serving over NATS with a cursor key of its own', async () => {
      // NATS answers: without the check each would connect and serve, its cursors sealed with a
      // random key no other replica opens (cursor.ts picks the key by TRANSPORT).
      for (const name of Object.keys(ENTRY_POINTS) as (keyof typeof ENTRY_POINTS)[]) {
        const { code, lines } = await run(ENTRY_POINTS[name], { TRANSPORT: '', NATS_URL: nats.url, PORT: String(await freePort()), SHORT_PORT: String(await freePort()), DATA_DIR: dataDir })
        expect([name, code, lines]).toEqual([name, 2, [`[${name}] this entry runs the ${name} process alone over NATS (TRANSPORT=nats); the one-process mode is \`bun start\` (standalone/src/main.ts)`]])
      }
    }, 50_000)

    it('the gateway with PORT taken, also by a listener that shares ports (another gateway): one line naming the port, exit 1', async () => {
      for (const reusePort of [false, true]) {
        const taken = Bun.serve({ port: await freePort(), hostname: '0.0.0.0', reusePort, fetch: () => new Response('taken') })
        try {
          const { code, lines } = await run(ENTRY_POINTS.gateway, { TRANSPORT: 'nats', NATS_URL: nats.url, PORT: String(taken.port) })
          expect([code, lines]).toEqual([1, [`[gateway] cannot start: port ${taken.port} (PORT) is already in use`]])
        } finally {
          taken.stop(true)
        }
      }
    })

    it('the gateway with NATS unreachable: one line naming NATS_URL (without credentials), exit 1', async () => {
      const url = await unreachableNats()
      const withSecret = url.replace('nats://', 'nats://user:s3cret@')
      const { code, lines } = await run(ENTRY_POINTS.gateway, { TRANSPORT: 'nats', NATS_URL: withSecret, PORT: String(await freePort()) })
      expect([code, lines]).toEqual([1, [`[gateway] cannot start: NATS at ${url} is unreachable (CONNECTION_REFUSED)`]])
    })

    it('the gateway with credentials NATS refuses: one line saying so, exit 1', async () => {
      const guarded = await startNats({ auth: { user: 'library', password: 'right' } })
      try {
        const wrong = guarded.url.replace(':right@', ':wrong@')
        const { code, lines } = await run(ENTRY_POINTS.gateway, { TRANSPORT: 'nats', NATS_URL: wrong, PORT: String(await freePort()) })
        expect([code, lines]).toEqual([1, [`[gateway] cannot start: NATS at nats://127.0.0.1:${guarded.port} refused the credentials (AUTHORIZATION_VIOLATION)`]])
      } finally {
        await guarded.stop()
      }
    })

    it('the gateway with a NATS_URL scheme other than nats:// or tls://: one line naming NATS_URL, exit 2', async () => {
      const { code, lines } = await run(ENTRY_POINTS.gateway, { TRANSPORT: 'nats', NATS_URL: nats.url.replace('nats://', 'http://'), PORT: String(await freePort()) })
      expect([code, lines]).toEqual([2, [`[config] invalid setting NATS_URL="http://127.0.0.1:${nats.port}": "http://127.0.0.1:${nats.port}" is not a NATS server (nats://host:port, tls://host:port or host:port, several separated by commas)`]])
    }, 20_000)

    it('a process with NATS_URL tls:// and a server without TLS: one line saying so, exit 1, never a plain-text connection', async () => {
      const url = nats.url.replace('nats://', 'tls://')
      for (const name of ['gateway', 'resolver', 'auth'] as const) {
        const { code, lines } = await run(ENTRY_POINTS[name], { TRANSPORT: 'nats', NATS_URL: url, PORT: String(await freePort()), SHORT_PORT: String(await freePort()), DATA_DIR: dataDir })
        expect([code, lines]).toEqual([1, [`[${name}] cannot start: NATS at ${url} offers no TLS, which tls:// requires (SERVER_OPT_NA)`]])
      }
    }, 50_000)

    it('a service process with NATS unreachable: one line naming NATS_URL, exit 1', async () => {
      const url = await unreachableNats()
      const { code, lines } = await run(ENTRY_POINTS.auth, { TRANSPORT: 'nats', NATS_URL: url, DATA_DIR: dataDir })
      expect([code, lines]).toEqual([1, [`[auth] cannot start: NATS at ${url} is unreachable (CONNECTION_REFUSED)`]])
    })

    it('the resolver with SHORT_PORT taken (on its main thread or on its threads): one line naming the port, exit 1', async () => {
      for (const threads of ['0', '2']) {
        const taken = occupy(await freePort())
        try {
          const { code, lines } = await run(ENTRY_POINTS.resolver, { TRANSPORT: 'nats', NATS_URL: nats.url, SHORT_PORT: String(taken.port), DATA_DIR: dataDir, RESOLVER_THREADS: threads })
          expect([code, lines]).toEqual([1, [`[resolver] cannot start: port ${taken.port} (SHORT_PORT) is already in use`]])
        } finally {
          taken.stop(true)
        }
      }
    })

    it('a process that needs JetStream, on a NATS server without it: one line saying so and how to enable it (NATS_URL without credentials), exit 1', async () => {
      // nats-server without -js: nothing answers $JS.API, which nats.js reports only as "503".
      const plain = await startNats({ auth: { user: 'library', password: 's3cret' } })
      try {
        for (const name of ['resolver', 'analytics', 'webhooks'] as const) {
          const { code, lines } = await run(ENTRY_POINTS[name], { TRANSPORT: 'nats', NATS_URL: plain.url, SHORT_PORT: String(await freePort()), DATA_DIR: dataDir })
          expect([code, lines]).toEqual([1, [`[${name}] cannot start: NATS at nats://127.0.0.1:${plain.port} has no JetStream (503): start nats-server with -js (or a jetstream block in its configuration)`]])
        }
      } finally {
        await plain.stop()
      }
    }, 50_000)

    it('a process that needs JetStream, as a NATS user denied its API ($JS.API.>): one line saying so and what to allow, exit 1', async () => {
      // An authorization block given the product's user a reader's permissions (deploy/README.md §2).
      const dir = mkdtempSync(join(tmpdir(), 'lr-nats-perm-'))
      const port = await freePort()
      const conf = join(dir, 'nats.conf')
      const denied = '{ publish: { allow: [">"], deny: ["$JS.API.>"] }, subscribe: { allow: [">"] } }'
      await Bun.write(conf, `listen: 127.0.0.1:${port}\njetstream { store_dir: "${join(dir, 'js')}" }\nauthorization { users = [ { user: svc, password: pw, permissions: ${denied} } ] }\n`)
      const server = Bun.spawn(['nats-server', '-c', conf], { stdout: 'ignore', stderr: 'ignore' })
      try {
        await waitForPort(port)
        for (const name of ['resolver', 'analytics', 'webhooks'] as const) {
          const { code, lines } = await run(ENTRY_POINTS[name], { TRANSPORT: 'nats', NATS_URL: `nats://svc:pw@127.0.0.1:${port}`, SHORT_PORT: String(await freePort()), DATA_DIR: dataDir })
          expect([code, lines]).toEqual([1, [`[${name}] cannot start: NATS at nats://127.0.0.1:${port} refuses this user JetStream's API (Permissions Violation for Publish to "$JS.API.INFO"): the product's user needs every subject, $JS.API.> included (deploy/README.md §2)`]])
        }
      } finally {
        server.kill()
        await server.exited
        rmSync(dir, { recursive: true, force: true })
      }
    }, 50_000)

    it('a process whose stream was made by hand with another retention than limits: one line naming the stream and what to do, exit 1', async () => {
      // SCAN_BATCHES as a work queue refuses analytics' second consumer (the relay's) and the
      // webhooks worker's: they had stopped with `consumer not found` or `NATS connection closed
      // for good (closed)`, the resolver started and published into it.
      const js = await startNats({ jetstream: true })
      const nc = await connect({ servers: js.url })
      try {
        await (await nc.jetstreamManager()).streams.add({ ...scanBatchStreamConfig(), retention: RetentionPolicy.Workqueue })
        for (const name of ['resolver', 'analytics', 'webhooks'] as const) {
          const { code, lines } = await run(ENTRY_POINTS[name], { TRANSPORT: 'nats', NATS_URL: js.url, SHORT_PORT: String(await freePort()), DATA_DIR: dataDir })
          expect([code, lines]).toEqual([1, [`[${name}] cannot start: the JetStream stream SCAN_BATCHES has retention workqueue, not limits: several consumers read each of its messages; remove it (nats stream rm SCAN_BATCHES) or recreate it with --retention limits`]])
        }
      } finally {
        await nc.close()
        await js.stop()
      }
    }, 50_000)

    it('the resolver with NATS unreachable: one line naming NATS_URL, exit 1', async () => {
      const url = await unreachableNats()
      const { code, lines } = await run(ENTRY_POINTS.resolver, { TRANSPORT: 'nats', NATS_URL: url, SHORT_PORT: String(await freePort()), DATA_DIR: dataDir })
      expect([code, lines]).toEqual([1, [`[resolver] cannot start: NATS at ${url} is unreachable (CONNECTION_REFUSED)`]])
    })

    it('the resolver with NATS_URL a port that accepts and never answers: one line within about 5 s, exit 1', async () => {
      // Another kind of server on the port, or a broker hung: the connection opens and no INFO comes.
      const silent = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
      try {
        const url = `nats://127.0.0.1:${silent.port}`
        const { code, lines } = await run(ENTRY_POINTS.resolver, { TRANSPORT: 'nats', NATS_URL: url, SHORT_PORT: String(await freePort()), DATA_DIR: dataDir })
        expect([code, lines]).toEqual([1, [`[resolver] cannot start: NATS at ${url} is unreachable (TIMEOUT)`]])
      } finally {
        silent.stop(true)
      }
    }, 15_000) // nats.js's own connect timeout is 20 s

    it('a MONGODB_URL whose password is not percent-encoded: one line saying so, without the password, exit 1; the admin command line alike', async () => {
      const url = 'mongodb://library:pa/ss@127.0.0.1:1/lr'
      const { code, lines } = await run(ENTRY_POINTS.auth, { TRANSPORT: 'nats', NATS_URL: nats.url, STORE: 'mongo', MONGODB_URL: url })
      expect([code, lines]).toEqual([1, ['[auth] cannot start: the URL of MongoDB (mongodb://127.0.0.1:1/lr) cannot be read: Password contains unescaped characters (percent-encode the user and password)']])
      const env = { ...Bun.env, TRANSPORT: 'memory', STORE: 'mongo', MONGODB_URL: url }
      const admin = Bun.spawn(['bun', 'run', '--silent', 'admin', 'account', 'list'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
      const [out, err, exit] = await Promise.all([new Response(admin.stdout).text(), new Response(admin.stderr).text(), admin.exited])
      expect({ exit, out, err: err.trim().split('\n') }).toEqual({ exit: 1, out: '', err: ['{"error":"the URL of MongoDB (mongodb://127.0.0.1:1/lr) cannot be read: Password contains unescaped characters (percent-encode the user and password)"}'] })
    })

    const mongoSkip = mongoSkipReason()
    describe.skipIf(Boolean(mongoSkip) || Boolean(Bun.env.MONGODB_URL))(`MongoDB that requires a password${mongoSkip ? ` (skipped: ${mongoSkip})` : Bun.env.MONGODB_URL ? ' (skipped: it starts a FerretDB of its own, and MONGODB_URL is set)' : ''}`, () => {
      // Characters a URL must percent-encode: MONGODB_URL carries them encoded.
      const PASSWORD = 'p@ss:w/rd'
      let mongo: MongoServer
      beforeAll(async () => {
        mongo = await startFerretDb({ auth: { user: 'library', password: PASSWORD, database: 'lr' } })
      })
      afterAll(() => mongo?.stop())

      it('a service whose password MongoDB refuses: one line saying so, without the password, exit 1', async () => {
        const wrong = mongo.url.replace(encodeURIComponent(PASSWORD), 'wrong')
        const { code, lines } = await run(ENTRY_POINTS.auth, { TRANSPORT: 'nats', NATS_URL: nats.url, STORE: 'mongo', MONGODB_URL: wrong })
        const where = mongo.url.replace(/\/\/[^@]*@/, '//')
        expect([code, lines]).toEqual([1, [`[auth] cannot start: MongoDB at ${where} refused the credentials (AuthenticationFailed)`]])
      })

      it('the user and password MONGODB_URL carries (percent-encoded) are the ones the store writes with', async () => {
        const admin = async (...args: string[]) => {
          const env = { ...Bun.env, TRANSPORT: 'memory', STORE: 'mongo', MONGODB_URL: mongo.url }
          const proc = Bun.spawn(['bun', 'run', '--silent', 'admin', ...args], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
          const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
          expect({ code, err }).toEqual({ code: 0, err: '' })
          return JSON.parse(out)
        }
        await admin('account', 'create', '--email', 'owner@example.com', '--tier', 'business')
        expect((await admin('account', 'list')).accounts.map((a: { email: string }) => a.email)).toEqual(['owner@example.com'])
      })
    })

    it('the gateway with LIMITER=redis and Redis unreachable starts, ready and degraded (Redis is optional)', async () => {
      const port = await freePort()
      const env = { ...Bun.env, TRANSPORT: 'nats', NATS_URL: nats.url, PORT: String(port), LIMITER: 'redis', REDIS_URL: `redis://127.0.0.1:${await freePort()}` }
      const proc = Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS.gateway)], { cwd: ROOT, env, stdout: 'ignore', stderr: 'ignore' })
      try {
        const ready = async () => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.json(), () => null)
        await waitUntil(async () => (await ready()) !== null, 15_000, 'the gateway to listen')
        expect(await ready()).toEqual({ status: 'ready', checks: { nats: true }, degraded: ['redis'] })
      } finally {
        proc.kill('SIGTERM')
        await proc.exited
      }
    })
  })
