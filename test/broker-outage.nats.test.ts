import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ProcessGroup, servingCount, spawnProcesses } from '../deploy/local/processes'
import { type NatsServer, startNats } from './harness/nats'
import { freePort, waitUntil } from './harness/ports'
import { skipReason } from './harness/servers'

/**
 * The gateway and the resolver as their own processes while the broker is away
 * (docs/decisions.md §5, §8): they answer at once with 503 and Retry-After, never after a request
 * timeout, and no client reads an internal subject. No service process runs: what is measured is
 * the edge's answer when nothing behind it can be reached.
 */
const skip = skipReason('nats-server')
if (skip) describe.skip(`gateway and resolver without the broker (${skip})`, () => {})
else
  describe('gateway and resolver without the broker (real nats-server, separate processes)', () => {
    let nats: NatsServer
    let group: ProcessGroup
    let dataDir: string
    let api: string
    let short: string

    beforeAll(async () => {
      nats = await startNats({ jetstream: true })
      const [port, shortPort] = [await freePort(), await freePort()]
      dataDir = mkdtempSync(join(tmpdir(), 'lr-outage-'))
      const env = { ...Bun.env, TRANSPORT: 'nats', NATS_URL: nats.url, PORT: String(port), SHORT_PORT: String(shortPort), DATA_DIR: dataDir }
      group = spawnProcesses(env, ['resolver', 'gateway'])
      api = `http://127.0.0.1:${port}`
      short = `http://127.0.0.1:${shortPort}`
      const serving = () => servingCount(group.output(), 'gateway') > 0 && servingCount(group.output(), 'resolver') > 0
      await waitUntil(serving, 20_000, 'the gateway and the resolver').catch((error) => {
        throw new Error(`${error.message}\n${group.output()}`)
      })
    }, 30_000)

    afterAll(async () => {
      await group?.stop()
      await nats?.stop()
      rmSync(dataDir, { recursive: true, force: true })
    })

    /** One request, with how long its answer took. */
    const timed = async (url: string, init?: RequestInit) => {
      const started = performance.now()
      const res = await fetch(url, { redirect: 'manual', ...init })
      return { res, text: await res.text(), ms: performance.now() - started }
    }
    const v1 = () => timed(`${api}/v1/qrcodes`, { headers: { 'x-api-key': 'lrp_00000000000000000000000000000000' } })

    it('answers 503 with Retry-After naming no subject when no service answers', async () => {
      const { res, text } = await v1()
      expect([res.status, res.headers.get('retry-after')]).toEqual([503, '1'])
      expect(JSON.parse(text).error).toBeString()
      expect(text).not.toContain('.v1.')
    })

    describe('while nats-server is down', () => {
      beforeAll(() => nats.down())
      afterAll(() => nats.up())

      it('answers every /v1 request within a second: 503 JSON with Retry-After, no subject', async () => {
        for (let i = 0; i < 3; i++) {
          const { res, text, ms } = await v1()
          expect([res.status, res.headers.get('retry-after'), res.headers.get('content-type')]).toEqual([503, '1', 'application/json; charset=utf-8'])
          expect(text).not.toContain('.v1.')
          expect(ms).toBeLessThan(1_000)
        }
      })

      it('answers a short link it has not cached within a second: 503 with Retry-After', async () => {
        const { res, ms } = await timed(`${short}/Abcdefg1`)
        expect([res.status, res.headers.get('retry-after')]).toEqual([503, '1'])
        expect(ms).toBeLessThan(1_000)
      })

      it('says so on /readyz', async () => {
        const { res, text } = await timed(`${api}/readyz`)
        expect([res.status, JSON.parse(text).checks]).toEqual([503, { nats: false }])
      })
    })
  })
