import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { connect } from 'node:net'
import { RECORDS_SUBJECTS } from '@lr/proto'
import { createLogger, installLogger } from '@lr/platform/log'
import { createGateway } from '../src/app'
import { GOOD_KEY, scriptedBus } from './fake-bus'

installLogger(createLogger('gateway', 'warn'))

/** One request written byte for byte (fetch would merge the headers itself); status and body. */
function exchange(port: number, headers: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let text = ''
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET /v1/qrcodes HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${headers}\r\n`))
    socket.on('data', (chunk) => (text += chunk.toString('latin1')))
    socket.on('close', () => resolve({ status: Number(text.split(' ')[1]), body: text.split('\r\n\r\n')[1] ?? '' }))
    socket.on('error', reject)
  })
}

/**
 * The key header as proxies and clients get it wrong: sent twice (a proxy adding it again), it
 * had been "invalid API key" with a valid key in both; it now says what is wrong.
 */
describe('the x-api-key header', () => {
  let server: { stop(): Promise<void> | void; port: number }
  beforeAll(() => {
    const { bus } = scriptedBus({ [RECORDS_SUBJECTS.list]: () => ({ qrcodes: [], next_cursor: null }) })
    const app = createGateway({ bus }).listen({ port: 0, hostname: '127.0.0.1' })
    server = { port: app.server!.port!, stop: async () => void (await app.stop()) }
  })
  afterAll(() => server?.stop())

  it('refuses two x-api-key headers with a 403 that says so, even when both hold the valid key', async () => {
    for (const other of [GOOD_KEY, 'lrp_other']) {
      const answer = await exchange(server.port, `x-api-key: ${GOOD_KEY}\r\nx-api-key: ${other}\r\n`)
      expect([answer.status, JSON.parse(answer.body)]).toEqual([403, { error: 'several x-api-key headers: send the key in one' }])
    }
  })

  it('takes one header, however its name is spelled and with spaces around the key', async () => {
    for (const header of [`x-api-key: ${GOOD_KEY}\r\n`, `X-API-KEY:   ${GOOD_KEY}  \r\n`]) {
      const answer = await exchange(server.port, header)
      expect([answer.status, JSON.parse(answer.body)]).toEqual([200, { qrcodes: [], next_cursor: null }])
    }
    expect((await exchange(server.port, 'x-api-key: lrp_other\r\n')).status).toBe(403)
  })
})
