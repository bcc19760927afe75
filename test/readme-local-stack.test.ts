import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { networkInterfaces, tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './harness/ports'
import { skipReason } from './harness/servers'
import { stopProcess } from './harness/stop-process'

/**
 * README "The scale-out stack on one machine" is a recipe operators copy. Its NATS server is the
 * product's trust boundary (docs/decisions.md §12): the services act for whatever `principal` a
 * request names, so a client that reaches the server reads and writes every library without a
 * key. The recipe's server has no users, so it must listen on loopback alone, as its FerretDB
 * (`--listen-addr=127.0.0.1`) and Redis (protected mode) do. It had no `listen`: nats-server took
 * 0.0.0.0, and a probe from another address of the machine listed an account's records with a
 * forged principal (`records.v1.list`).
 */
const readme = readFileSync(join(import.meta.dir, '..', 'README.md'), 'utf8')

/** The text the recipe's `printf '...' > ./data/nats.conf` writes. */
function recipeNatsConf(): string {
  const start = readme.indexOf('\n### The scale-out stack on one machine\n')
  const block = readme.slice(readme.indexOf('```sh\n', start), readme.indexOf('\n```\n', start))
  const printf = block.match(/printf '([^']*)' > \.\/data\/nats\.conf/)
  if (!printf) throw new Error('the recipe writes no ./data/nats.conf with printf')
  return printf[1]!.replace(/\\n/g, '\n')
}

/** This machine's addresses other than loopback. */
const otherAddresses = () =>
  Object.values(networkInterfaces()).flatMap((list) => list ?? []).filter((a) => !a.internal && a.family === 'IPv4').map((a) => a.address)

const accepts = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host, port })
    socket.once('connect', () => (socket.destroy(), resolve(true)))
    socket.once('error', () => resolve(false))
  })

const skip = skipReason('nats-server')
if (skip) describe.skip(`README "The scale-out stack on one machine" (${skip})`, () => {})
else
  describe('README "The scale-out stack on one machine"', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-readme-nats-'))
    afterAll(() => rmSync(dir, { recursive: true, force: true }))

    it('runs its NATS server, which has no users, on loopback only', async () => {
      const conf = join(dir, 'nats.conf')
      writeFileSync(conf, recipeNatsConf().replace('./data/nats', join(dir, 'js')))
      const port = await freePort()
      // `-p` moves the recipe's port out of the way; the address it listens on stays the recipe's.
      // The log goes to a file: a pipe this test stopped reading would close under nats-server,
      // which then dies writing its next line.
      const logPath = join(dir, 'nats.log')
      const server = Bun.spawn(['nats-server', '-c', conf, '-p', String(port)], { stdout: 'ignore', stderr: Bun.file(logPath) })
      try {
        let log = ''
        for (const started = Date.now(); Date.now() - started < 10_000; await Bun.sleep(20)) {
          log = await Bun.file(logPath).text().catch(() => '')
          if (/Server is ready/.test(log) || /\[FTL\]/.test(log)) break
        }
        expect(log.match(/Listening for client connections on (\S+)/)?.[1]).toBe(`127.0.0.1:${port}`)
        expect(await accepts('127.0.0.1', port)).toBe(true)
        for (const address of otherAddresses()) expect({ address, accepted: await accepts(address, port) }).toEqual({ address, accepted: false })
      } finally {
        await stopProcess(server)
      }
    })
  })
