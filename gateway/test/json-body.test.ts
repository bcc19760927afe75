import { describe, expect, it } from 'bun:test'
import { createLogger, installLogger } from '@lr/platform/log'
import { RECORDS_SUBJECTS } from '@lr/proto'
import { createGateway } from '../src/app'
import { GOOD_KEY, scriptedBus } from './fake-bus'

installLogger(createLogger('gateway', 'warn'))

describe('JSON bodies', () => {
  const { bus, requests } = scriptedBus({ [RECORDS_SUBJECTS.create]: ({ body }) => ({ created: [body] }) })
  const app = createGateway({ bus })
  const post = (body: Uint8Array | string, contentType = 'application/json') =>
    app.handle(new Request('http://localhost/v1/qrcodes', { method: 'POST', headers: { 'x-api-key': GOOD_KEY, 'content-type': contentType }, body }))

  it('refuses bytes that are not UTF-8 with 400, and reads the next body whole (the decoder keeps nothing)', async () => {
    const broken = await post(new Uint8Array([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xc3, 0x22, 0x7d])) // {"n":"<cut é>"}
    expect([broken.status, await broken.json()]).toEqual([400, { error: 'request body is not valid JSON' }])
    const sent = await post(new TextEncoder().encode('{"name":"café"}'))
    expect([sent.status, await sent.json()]).toEqual([201, { created: [{ name: 'café' }] }])
    expect(requests.filter((r) => r.subject === RECORDS_SUBJECTS.create).map((r) => r.payload.body)).toEqual([{ name: 'café' }])
  })

  it('refuses a body declared in another charset with 415 (JSON is UTF-8), and takes utf-8 however spelled', async () => {
    const latin1 = await post(new Uint8Array([...new TextEncoder().encode('{"name":"caf'), 0xe9, ...new TextEncoder().encode('"}')]), 'application/json; charset=iso-8859-1')
    expect([latin1.status, await latin1.json()]).toEqual([415, { error: 'request body must be UTF-8 JSON: charset=iso-8859-1 is not read' }])
    const utf16 = await post(new Uint8Array(Buffer.from('{"name":"x"}', 'utf16le')), 'application/json;charset="UTF-16"')
    expect([utf16.status, await utf16.json()]).toEqual([415, { error: 'request body must be UTF-8 JSON: charset=UTF-16 is not read' }])
    const text = await post('{"name":"x"}', 'text/plain')
    expect([text.status, await text.json()]).toEqual([415, { error: 'request body must be JSON: send Content-Type: application/json' }])
    // RFC 9110 §15.5.16: the 415 names the type that is read.
    for (const refused of [latin1, utf16, text]) expect(refused.headers.get('accept')).toBe('application/json')
    for (const spelling of ['application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'application/json; charset=UTF8'])
      expect((await post('{"name":"café"}', spelling)).status).toBe(201)
  })

  // RFC 9110 §15.5.16: a content coding the server does not read is a 415. A gzip body had been a
  // 400 "not valid JSON" (the client sent valid JSON), and plain JSON labelled gzip was taken.
  it('refuses a compressed body with 415 naming its Content-Encoding, and takes identity', async () => {
    const encoded = (body: Uint8Array | string, coding: string) =>
      app.handle(new Request('http://localhost/v1/qrcodes', { method: 'POST', headers: { 'x-api-key': GOOD_KEY, 'content-type': 'application/json', 'content-encoding': coding }, body }))
    const message = (coding: string) => ({ error: `request body must not be compressed: Content-Encoding ${coding} is not read; send plain JSON` })
    const gzip = await encoded(Bun.gzipSync(new TextEncoder().encode('{"name":"gz"}')), 'gzip')
    expect([gzip.status, await gzip.json()]).toEqual([415, message('gzip')])
    const labelled = await encoded('{"name":"labelled"}', 'br')
    expect([labelled.status, await labelled.json()]).toEqual([415, message('br')])
    // RFC 7694 §3: the 415 of a content coding says which are read (none: identity).
    for (const refused of [gzip, labelled]) expect(refused.headers.get('accept-encoding')).toBe('identity')
    const identity = await encoded('{"name":"plain"}', 'identity')
    expect([identity.status, await identity.json()]).toEqual([201, { created: [{ name: 'plain' }] }])
    expect(requests.filter((r) => r.subject === RECORDS_SUBJECTS.create).map((r) => r.payload.body.name)).not.toContain('labelled')
  })
})
