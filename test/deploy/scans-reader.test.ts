import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AckPolicy, connect, DeliverPolicy, headers, type NatsConnection } from 'nats'
import { ensureScanBatchStream, ensureScanStream, SCAN_BATCH_STREAM } from '@lr/platform/scan-stream-config'
import { freePort, waitForPort } from '../harness/ports'
import { skipReason } from '../harness/servers'
import { stopProcess } from '../harness/stop-process'

/**
 * deploy/README.md §2 gives each outside consumer of scans a NATS user "that may read scans and
 * nothing else". Its first block let that user make consumers of SCANS, and a consumer may be a
 * push consumer: nats-server then publishes the stream's messages to its `deliver_subject`, any
 * subject, whatever the user may publish itself. A probe as that user made one delivering to
 * `scan-batches`: every scan of SCANS went into SCAN_BATCHES (analytics: `malformed scans in a
 * batch`), and one delivering to `records.v1.probe` reached the product's subscribers; with
 * `--deliver all` each such consumer copies a week of scans into the product's store.
 * This runs the README's block as written and reads scans the way README "Scan events" says.
 */
const deployReadme = readFileSync(join(import.meta.dir, '..', '..', 'deploy', 'README.md'), 'utf8')

/** The `authorization { ... }` or `accounts { ... }` block of §2, its passwords filled in. */
function readmeBlock(head: 'authorization' | 'accounts'): string {
  const start = deployReadme.indexOf('```\n' + head + ' {')
  if (start < 0) throw new Error(`deploy/README.md has no ${head} block`)
  const block = deployReadme.slice(start + 4, deployReadme.indexOf('\n```', start + 4))
  return block.replace('<a password>', 'product-pw').replace('<another password>', 'reader-pw')
}

/** The reader's inbox prefix and durable consumer, as §2 names them. */
const inboxPrefix = deployReadme.match(/inboxPrefix:\s+'([^']+)'/)?.[1] ?? ''
const durable = readmeBlock('authorization').match(/\$JS\.API\.CONSUMER\.MSG\.NEXT\.SCANS\.([\w-]+)/)?.[1] ?? ''

const scan = (scan_id: string) => ({
  scan_id,
  code: 'Abc12345',
  scanned_at: Date.now(),
  user_agent: 'Mozilla/5.0',
  visitor_id: 'a'.repeat(64),
  country: 'FR',
})

/** The reader's JetStream: the product's own API in one account, the imported one across accounts. */
const readerApi = {
  authorization: {},
  accounts: {
    apiPrefix: deployReadme.match(/apiPrefix: '([^']+)'/)?.[1] ?? '',
    checkAPI: false,
  },
}

const skip = skipReason('nats-server')
for (const head of ['authorization', 'accounts'] as const)
  if (skip) describe.skip(`deploy/README.md §2, the scans reader, ${head} (${skip})`, () => {})
  else
    describe(`deploy/README.md §2, the scans reader, ${head}`, () => {
      const dir = mkdtempSync(join(tmpdir(), 'lr-scans-reader-'))
      let server: ReturnType<typeof Bun.spawn>
      let url = ''
      let product: NatsConnection
      const reader = () =>
        connect({
          servers: url,
          user: 'scans-reader',
          pass: 'reader-pw',
          inboxPrefix,
          timeout: 2000,
        })
      const publishScan = async (id: string) => {
        const h = headers()
        h.set('Nats-Msg-Id', id)
        await product.jetstream().publish('scans.Abc12345', JSON.stringify(scan(id)), { headers: h })
      }

      beforeAll(async () => {
        const port = await freePort()
        url = `nats://127.0.0.1:${port}`
        const conf = join(dir, 'nats.conf')
        writeFileSync(conf, `listen: 127.0.0.1:${port}\njetstream { store_dir: "${join(dir, 'js')}" }\n${readmeBlock(head)}\n`)
        server = Bun.spawn(['nats-server', '-c', conf], {
          stdout: 'ignore',
          stderr: 'ignore',
        })
        await waitForPort(port)
        product = await connect({
          servers: url,
          user: 'library-records',
          pass: 'product-pw',
        })
        const jsm = await product.jetstreamManager()
        await ensureScanStream(jsm)
        await ensureScanBatchStream(jsm)
        // What §2 has the operator run as the product's user: the reader's durable consumer.
        await jsm.consumers.add('SCANS', {
          durable_name: durable,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          filter_subject: 'scans.>',
        })
      })
      afterAll(async () => {
        await product?.close()
        if (server) await stopProcess(server)
        rmSync(dir, { recursive: true, force: true })
      })

      it('names a durable consumer and an inbox prefix of its own', () => {
        expect(durable).toBe('billing')
        expect(inboxPrefix).toBe('_INBOX_scans_reader')
      })

      it('reads every scan live (scans.>) and from its durable consumer, which resumes where it was', async () => {
        const nc = await reader()
        const live: string[] = []
        const sub = nc.subscribe('scans.>', {
          callback: (_e, m) => live.push(m.json<{ scan_id: string }>().scan_id),
        })
        await nc.flush()
        await publishScan('s1')
        await publishScan('s2')
        const c = await nc.jetstream(readerApi[head]).consumers.get('SCANS', durable)
        const first: string[] = []
        for await (const m of await c.fetch({
          max_messages: 10,
          expires: 1000,
        }))
          (first.push(m.json<{ scan_id: string }>().scan_id), m.ack())
        sub.unsubscribe()
        await nc.close()
        expect(first).toEqual(['s1', 's2'])
        expect(live).toEqual(['s1', 's2'])

        await publishScan('s3')
        const again = await reader()
        const next: number[] = []
        const resumed = await again.jetstream(readerApi[head]).consumers.get('SCANS', durable)
        for await (const m of await resumed.fetch({
          max_messages: 10,
          expires: 1000,
        }))
          (next.push(m.seq), m.ack())
        await again.close()
        expect(next).toEqual([3])
      })

      it('cannot make the server publish for it: no consumer of its own making, push or pull', async () => {
        const nc = await reader()
        const jsm = await nc.jetstreamManager({ timeout: 1000, checkAPI: false }).catch(() => undefined)
        for (const config of [
          {
            durable_name: 'probe-push',
            ack_policy: AckPolicy.None,
            deliver_subject: 'scan-batches',
            deliver_policy: DeliverPolicy.All,
          },
          { durable_name: 'probe-pull', ack_policy: AckPolicy.Explicit },
        ])
          await jsm?.consumers.add('SCANS', config).catch(() => undefined)
        await nc.close()
        await Bun.sleep(300)
        const names: string[] = []
        for await (const ci of (await product.jetstreamManager()).consumers.list('SCANS')) names.push(ci.name)
        expect(names).toEqual([durable])
        expect((await (await product.jetstreamManager()).streams.info(SCAN_BATCH_STREAM)).state.messages).toBe(0)
      })

      if (head === 'accounts')
        it("cannot have the server answer its requests on the product's subjects", async () => {
          // nats-server publishes an answer to whatever reply subject a request names: within one
          // account a reader's STREAM.INFO answered on scan-batches went into SCAN_BATCHES.
          const nc = await reader()
          nc.publish(`${readerApi.accounts.apiPrefix}.CONSUMER.INFO.SCANS.${durable}`, '', { reply: 'scan-batches' })
          nc.publish(`${readerApi.accounts.apiPrefix}.CONSUMER.MSG.NEXT.SCANS.${durable}`, JSON.stringify({ batch: 5, expires: 500_000_000 }), { reply: 'scan-batches' })
          await publishScan('s4')
          await nc.flush()
          await Bun.sleep(500)
          await nc.close()
          expect((await (await product.jetstreamManager()).streams.info(SCAN_BATCH_STREAM)).state.messages).toBe(0)
        })

      it('publishes nothing and asks the services nothing', async () => {
        const seen: string[] = []
        const subs = ['scans.>', 'scan-batches', 'auth.v1.>'].map((s) => product.subscribe(s, { callback: (_e, m) => seen.push(m.subject) }))
        await product.flush()
        const nc = await reader()
        const refused: string[] = []
        ;(async () => {
          for await (const s of nc.status()) if (s.type === 'error') refused.push(String(s.data))
        })()
        nc.publish('scans.Abc12345', '{}')
        nc.publish('scan-batches', '[]')
        await nc.request('auth.v1.verify', '{}', { timeout: 500 }).catch(() => undefined)
        await nc.flush().catch(() => undefined)
        await Bun.sleep(200)
        await nc.close().catch(() => undefined)
        for (const sub of subs) sub.unsubscribe()
        expect(seen).toEqual([])
        // Across accounts its publishes stay in its own account, where nothing refuses them.
        if (head === 'authorization') expect(refused).toEqual(['PERMISSIONS_VIOLATION', 'PERMISSIONS_VIOLATION', 'PERMISSIONS_VIOLATION'])
      })
    })
