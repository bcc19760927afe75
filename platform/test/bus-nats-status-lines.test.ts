import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createNatsBus, type NatsBus } from '@lr/platform/bus-nats'
import { startNats, type NatsServer } from '../../test/harness/nats'
import { waitUntil } from '../../test/harness/ports'
import { skipReason } from '../../test/harness/servers'
import { captureLog } from './log-capture'

/**
 * A broker that goes away and comes back is said in a process's log, once each way, naming the
 * server but never the credentials of NATS_URL. A soak of the scale-out stack saw a 4 s NATS
 * restart leave the gateway, auth, records, dynamic and webhooks without a line.
 */
const skip = skipReason('nats-server')
if (skip) describe.skip(`NATS bus status lines (${skip})`, () => {})
else
  describe('NATS bus status lines', () => {
    const password = 'Status-Line-Secret-7'
    let nats: NatsServer
    let bus: NatsBus
    beforeAll(async () => {
      nats = await startNats({ auth: { user: 'lr', password } })
      bus = await createNatsBus(nats.url, 'status-lines')
    })
    afterAll(async () => {
      await bus?.close()
      await nats?.stop()
    })

    it('writes one warn line when the connection drops and one info line when it is back, without the password', async () => {
      const log = captureLog()
      try {
        await nats.down()
        await waitUntil(() => log.lines.some((line) => line.msg.startsWith('NATS connection lost')), 5_000, 'the lost line')
        await nats.up()
        await waitUntil(() => log.lines.some((line) => line.msg === 'NATS connection back'), 10_000, 'the back line')
        const said = log.lines.filter((line) => line.msg.startsWith('NATS connection'))
        expect(said.map((line) => [line.msg.split(':')[0], line.server])).toEqual([
          ['NATS connection lost', `127.0.0.1:${nats.port}`],
          ['NATS connection back', `127.0.0.1:${nats.port}`],
        ])
        expect(JSON.stringify(log.lines)).not.toContain(password)
      } finally {
        log.restore()
      }
    }, 30_000)

    it('writes the lost line once per outage, not once per failed attempt (a server that refuses the credentials now)', async () => {
      const server = await startNats({ auth: { user: 'lr', password } })
      const refused = await createNatsBus(server.url, 'status-lines-refused')
      const log = captureLog()
      try {
        await server.down()
        server.setPassword('rotated-elsewhere')
        await server.up()
        // nats.js tells a disconnect after each refused attempt, and gives up after two in a row.
        await waitUntil(() => refused.connection.isClosed(), 10_000, 'the client to give up')
        expect(log.lines.filter((line) => line.msg.startsWith('NATS connection lost')).length).toBe(1)
      } finally {
        log.restore()
        await refused.close().catch(() => undefined)
        await server.stop()
      }
    }, 30_000)
  })
