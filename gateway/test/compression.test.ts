import { describe, expect, it } from 'bun:test'
import { gunzipSync } from 'node:zlib'
import { createLogger, installLogger } from '@lr/platform/log'
import { RECORDS_SUBJECTS } from '@lr/proto'
import { createGateway } from '../src/app'
import { negotiate } from '../src/plugins/content-coding'
import { GOOD_KEY, scriptedBus } from './fake-bus'

installLogger(createLogger('gateway', 'warn'))

describe('Accept-Encoding negotiation', () => {
  const cases: [string | null, 'br' | 'gzip' | null][] = [
    [null, null],
    ['', null],
    ['gzip', 'gzip'],
    ['GZIP', 'gzip'],
    ['x-gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br, zstd', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=1.0, gzip;q=1.0', 'br'],
    ['br;q=0, gzip;q=0', null],
    ['*', 'br'],
    ['*;q=0', null],
    ['gzip;q=0, *', 'br'],
    ['br;q=0, *', 'gzip'],
    ['identity', null],
    ['deflate, zstd', null],
  ]
  for (const [header, coding] of cases)
    it(`answers ${JSON.stringify(header)} with ${coding ?? 'identity'}`, () => expect(negotiate(header)).toBe(coding))
})

/** A CSV page of pseudo-random text (compresses about 2:1, like real rows): 64 KiB. */
const page = (n: number) => {
  let seed = n + 1
  const cells = Array.from({ length: 2048 }, () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed.toString(16).padStart(8, '0')
  })
  const line = (i: number) => `row${n}-${i},${cells.slice(i * 16, i * 16 + 16).join('')}\r\n`
  return Array.from({ length: 128 }, (_, i) => line(i)).join('')
}

describe('a compressed export', () => {
  const exportOf = (pages: number) => {
    const { bus, requests } = scriptedBus({
      [RECORDS_SUBJECTS.export]: ({ cursor }) => {
        const n = cursor === null ? 0 : Number(cursor)
        return { csv: page(n), next_cursor: n + 1 < pages ? String(n + 1) : null }
      },
    })
    const app = createGateway({ bus })
    const pagesAsked = () => requests.filter((r) => r.subject === RECORDS_SUBJECTS.export).length
    const get = () => app.handle(new Request('http://localhost/v1/qrcodes/export', { headers: { 'x-api-key': GOOD_KEY, 'accept-encoding': 'gzip' } }))
    return { get, pagesAsked }
  }

  it('decodes to every page, in order', async () => {
    const { get } = exportOf(40)
    const res = await get()
    expect(res.headers.get('content-encoding')).toBe('gzip')
    const csv = new TextDecoder().decode(gunzipSync(new Uint8Array(await res.arrayBuffer())))
    expect(csv).toBe(Array.from({ length: 40 }, (_, n) => page(n)).join(''))
  })

  it('asks for the next page only as the client reads: a client that stops holds the export a few pages in', async () => {
    const { get, pagesAsked } = exportOf(10_000)
    const reader = (await get()).body!.getReader()
    for (let i = 0; i < 3; i++) expect((await reader.read()).done).toBe(false)
    await Bun.sleep(300)
    const held = pagesAsked()
    await Bun.sleep(300)
    // 10 000 pages are 640 MiB of CSV: without backpressure they would all be asked for (and held).
    expect(pagesAsked()).toBe(held)
    expect(held).toBeLessThan(8)
    await reader.cancel()
  })
})
