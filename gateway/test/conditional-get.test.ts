import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { RECORDS_SUBJECTS } from '@lr/proto'
import { etagOf } from '@lr/platform/etag'
import { createLogger, installLogger } from '@lr/platform/log'
import { createGateway } from '../src/app'
import { GOOD_KEY, scriptedBus } from './fake-bus'

installLogger(createLogger('gateway', 'warn'))

const RECORD = { qr_id: 'qr_1', url: 'https://example.com/', name: 'one' }
const TAG = etagOf(RECORD)

/**
 * Conditional GET and HEAD of one record over a real socket (RFC 9110 §13). If-Match on a GET
 * naming another version had been ignored (200); it is 412 like a stale If-Match on PATCH.
 */
describe('conditional GET of a record', () => {
  let base = ''
  let stop: () => Promise<void>
  beforeAll(() => {
    const { bus } = scriptedBus({ [RECORDS_SUBJECTS.get]: () => RECORD })
    const app = createGateway({ bus }).listen({ port: 0, hostname: '127.0.0.1' })
    base = `http://127.0.0.1:${app.server!.port}`
    stop = async () => void (await app.stop())
  })
  afterAll(() => stop?.())
  const get = (headers: Record<string, string>, method = 'GET') =>
    fetch(`${base}/v1/qrcodes/qr_1`, { method, headers: { 'x-api-key': GOOD_KEY, ...headers } })

  it('answers 412 in JSON to an If-Match naming another version, GET and HEAD alike', async () => {
    for (const ifMatch of ['"stale"', `W/${TAG}`, '"a", "b"']) {
      const res = await get({ 'if-match': ifMatch })
      expect([ifMatch, res.status, await res.json()]).toEqual([ifMatch, 412, { error: expect.stringContaining('If-Match') }])
      expect((await get({ 'if-match': ifMatch }, 'HEAD')).status).toBe(412)
    }
  })

  it('answers the record to an If-Match naming its version or *, and 304 to If-None-Match as before', async () => {
    for (const ifMatch of [TAG, '*', `"other", ${TAG}`]) {
      const res = await get({ 'if-match': ifMatch })
      expect([ifMatch, res.status, res.headers.get('etag'), await res.json()]).toEqual([ifMatch, 200, TAG, RECORD])
    }
    const notModified = await get({ 'if-match': TAG, 'if-none-match': TAG })
    expect([notModified.status, notModified.headers.get('etag'), await notModified.text()]).toEqual([304, TAG, ''])
  })
})
