import { afterAll, afterEach, describe, expect, it } from 'bun:test'
import { httpDuration } from '@lr/platform/metrics'
import { captureLog } from '@lr/platform/testing/log-capture'
import { RECORDS_SUBJECTS } from '@lr/proto'
import { createGateway } from '../src/app'
import { GOOD_KEY, scriptedBus } from './fake-bus'

// An export's access line and lr_http_request_duration_seconds cover its whole body, not only
// its first chunk: Elysia's onAfterResponse runs once the headers are out.

const captured = captureLog()
afterEach(() => void captured.lines.splice(0))
const listening: { stop(): unknown }[] = []
afterAll(() => listening.forEach((app) => app.stop()))

/** A gateway whose record export has two chunks, the second `delayMs` after it is asked. */
function exporting(delayMs: number) {
  const { bus } = scriptedBus({
    [RECORDS_SUBJECTS.export]: async ({ cursor }) => {
      if (cursor === null) return { csv: 'qr_id\r\nqr_1\r\n', next_cursor: 'c2' }
      await Bun.sleep(delayMs)
      return { csv: 'qr_2\r\n', next_cursor: null }
    },
  })
  // Listening, as the gateway does: Bun itself sends the body (and drops a HEAD's).
  const app = createGateway({ bus }).listen({ port: 0, hostname: '127.0.0.1' })
  listening.push(app)
  // Not compressed: gzip would hold the first chunk's few bytes until the next.
  return (method = 'GET') => fetch(`http://127.0.0.1:${app.server!.port}/v1/qrcodes/export`, { method, headers: { 'x-api-key': GOOD_KEY, 'accept-encoding': 'identity' } })
}

/** lr_http_request_duration_seconds of the export route answered 200 to `method`: its count and sum. */
async function exportsTimed(method = 'GET') {
  const series = (await httpDuration.get()).values.filter((v) => v.labels.route === '/v1/qrcodes/export' && v.labels.method === method && v.labels.status === 200 + '')
  const of = (name: string) => series.find((v) => v.metricName === `lr_http_request_duration_seconds_${name}`)?.value ?? 0
  return { count: of('count'), sum: of('sum') }
}

const accessLines = () => captured.lines.filter((line) => line.msg === 'request' && line.route === '/v1/qrcodes/export')

describe('an export\'s time', () => {
  it('runs to its last chunk: the access line and the histogram wait for the body', async () => {
    const before = await exportsTimed()
    const answer = await exporting(300)()
    expect(answer.status).toBe(200)
    expect(await answer.text()).toBe('qr_id\r\nqr_1\r\nqr_2\r\n')
    await Bun.sleep(20)
    const after = await exportsTimed()
    expect(after.count).toBe(before.count + 1)
    expect(after.sum - before.sum).toBeGreaterThanOrEqual(0.29)
    expect(accessLines()).toEqual([expect.objectContaining({ method: 'GET', status: 200, duration_ms: expect.any(Number) })])
    expect(accessLines()[0]!.duration_ms).toBeGreaterThanOrEqual(290)
  })

  it('is under way while the body is, and ends when the client goes away, and for a HEAD, whose body is never sent', async () => {
    const get = exporting(5000)
    const before = await exportsTimed()
    const answer = await get()
    const reader = answer.body!.getReader()
    await reader.read()
    await Bun.sleep(50)
    expect((await exportsTimed()).count).toBe(before.count)
    expect(accessLines()).toEqual([])
    await reader.cancel()
    await Bun.sleep(50)
    expect((await exportsTimed()).count).toBe(before.count + 1)
    const heads = await exportsTimed('HEAD')
    expect((await get('HEAD')).status).toBe(200)
    await Bun.sleep(50)
    expect((await exportsTimed('HEAD')).count).toBe(heads.count + 1)
    expect(accessLines().map((line) => line.method)).toEqual(['GET', 'HEAD'])
  })
})
