import { describe, expect, it } from 'bun:test'
import { createLogger, installLogger } from '@lr/platform/log'
import { RECORDS_SUBJECTS } from '@lr/proto'
import { createGateway } from '../src/app'
import { GOOD_KEY, scriptedBus } from './fake-bus'

installLogger(createLogger('gateway', 'warn'))

describe('JSON bodies', () => {
  const { bus, requests } = scriptedBus({ [RECORDS_SUBJECTS.create]: ({ body }) => ({ created: [body] }) })
  const app = createGateway({ bus })
  const post = (body: Uint8Array | string) =>
    app.handle(new Request('http://localhost/v1/qrcodes', { method: 'POST', headers: { 'x-api-key': GOOD_KEY, 'content-type': 'application/json' }, body }))

  it('refuses bytes that are not UTF-8 with 400, and reads the next body whole (the decoder keeps nothing)', async () => {
    const broken = await post(new Uint8Array([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xc3, 0x22, 0x7d])) // {"n":"<cut é>"}
    expect([broken.status, await broken.json()]).toEqual([400, { error: 'request body is not valid JSON' }])
    const sent = await post(new TextEncoder().encode('{"name":"café"}'))
    expect([sent.status, await sent.json()]).toEqual([201, { created: [{ name: 'café' }] }])
    expect(requests.filter((r) => r.subject === RECORDS_SUBJECTS.create).map((r) => r.payload.body)).toEqual([{ name: 'café' }])
  })
})
