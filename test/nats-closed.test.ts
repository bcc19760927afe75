import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ENTRY_POINTS, type ProcessGroup, type ProcessName, servingCount, spawnProcesses } from '../deploy/local/processes'
import { type NatsServer, startNats } from './harness/nats'
import { freePort, waitUntil } from './harness/ports'
import { skipReason } from './harness/servers'

/**
 * A NATS connection that closes for good (the server refuses the process's credentials twice in
 * a row: rotated or revoked) ends the process with one error line and exit 1, after its usual
 * stop, so its supervisor starts it again. Before, every process stayed up with a dead bus: the
 * gateway answered 503 to everything and /healthz stayed 200. A stop of the process's own
 * (SIGTERM) closes its connection too, and still exits 0.
 */
const NAMES = Object.keys(ENTRY_POINTS) as ProcessName[]
const CLOSED_LINE = /"level":"error"[^\n]*"msg":"the (NATS|analytics-relay NATS) connection closed for good \(/

const skip = skipReason('nats-server')
if (skip) describe.skip(`processes whose NATS connection closes for good (${skip})`, () => {})
else
  describe('processes whose NATS connection closes for good (real nats-server, separate processes)', () => {
    let nats: NatsServer
    let group: ProcessGroup
    let dataDir: string

    beforeAll(async () => {
      nats = await startNats({ jetstream: true, auth: { user: 'library', password: 'first-secret' } })
      const [port, shortPort] = [await freePort(), await freePort()]
      dataDir = mkdtempSync(join(tmpdir(), 'lr-closed-'))
      group = spawnProcesses({ ...Bun.env, TRANSPORT: 'nats', NATS_URL: nats.url, PORT: String(port), SHORT_PORT: String(shortPort), DATA_DIR: dataDir })
      await waitUntil(() => NAMES.every((name) => servingCount(group.output(), name) > 0), 30_000, 'every process').catch((error) => {
        throw new Error(`${error.message}\n${group.output()}`)
      })
    }, 40_000)

    afterAll(async () => {
      await group?.stop()
      await nats?.stop()
      rmSync(dataDir, { recursive: true, force: true })
    })

    const linesOf = (name: ProcessName) => group.output().split('\n').filter((line) => line.startsWith(`[${name}] `))

    it('a stop by SIGTERM closes the connection and still exits 0, with no error line', async () => {
      const exited = group.exited('webhooks')!
      process.kill(group.pid('webhooks')!, 'SIGTERM')
      expect(await exited).toBe(0)
      expect(linesOf('webhooks').filter((line) => line.includes('"level":"error"'))).toEqual([])
    }, 15_000)

    it('every other process stops with one line and exit 1 once the server refuses its credentials', async () => {
      const others = NAMES.filter((name) => name !== 'webhooks')
      const exits = others.map((name) => group.exited(name)!)
      // A rotation the processes were not told of: the same server, another password.
      await nats.down()
      nats.setPassword('second-secret')
      await nats.up()
      const deadline = Bun.sleep(20_000).then(() => 'still running' as const)
      const codes = await Promise.all(exits.map((exited) => Promise.race([exited, deadline])))
      expect(Object.fromEntries(others.map((name, i) => [name, codes[i]]))).toEqual(Object.fromEntries(others.map((name) => [name, 1])))
      for (const name of others) {
        const closed = linesOf(name).filter((line) => CLOSED_LINE.test(line))
        // Analytics has two connections (its bus and its relay's); the first to close stops it.
        expect({ name, lines: closed.length }).toEqual({ name, lines: 1 })
        expect(closed[0]).toContain('Authorization Violation')
        // The stop itself went through: no "shutdown failed" or any other error line.
        expect({ name, errors: linesOf(name).filter((line) => line.includes('"level":"error"')).length }).toEqual({ name, errors: 1 })
      }
    }, 30_000)
  })
