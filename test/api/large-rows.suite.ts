import { describe, expect, it } from 'bun:test'
import { call } from '../harness/client'
import { freshMember } from '../harness/fixtures'
import type { Stack } from '../harness/stack'

const item = (n: number | string) => ({ url: `https://example.com/${n}`, name: `Code ${n}` })

/**
 * Records of maximum size, about 10 MB per library: a list page and an export each more than one
 * bus message may carry (BUS_MAX_PAYLOAD_BYTES). Not in the scale-out run: writing them takes
 * over a minute on FerretDB's SQLite backend (README "MongoDB compatibility"); the Mongo paging
 * they go through is covered by the record store's contract suite.
 */
export function largeRowsSuite(stack: () => Stack) {
  describe('static QR codes of maximum size', () => {
    const api = (method: string, path: string, key: string, body?: unknown) => call(stack(), method, path, { key, body })

  it('answers limit=1000 of maximum-size records with a shorter page that fits the bus, and a cursor to the rest', async () => {
      const own = await freshMember(stack())
      const big = (n: number) => ({
        url: `https://example.com/${n}/${'u'.repeat(2000)}`.slice(0, 2048),
        name: `${n} ${'n'.repeat(200)}`.slice(0, 200),
        style: { pattern: 's'.repeat(8 * 1024 - 20) },
      })
      for (let b = 0; b < 20; b++) {
        const res = await api('POST', '/v1/qrcodes/batch', own.key, { qrcodes: Array.from({ length: 50 }, (_, i) => big(b * 50 + i)) })
        expect(res.status).toBe(201)
      }
      const seen = new Set<string>()
      let cursor: string | null = null
      let pages = 0
      do {
        const res: any = await api('GET', `/v1/qrcodes?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, own.key)
        expect(res.status).toBe(200)
        // 1000 such records are about 10.5 MB: more than one bus message may carry (8 MiB by default).
        expect(res.text.length).toBeLessThanOrEqual(8 * 1024 * 1024)
        for (const r of res.body.qrcodes) seen.add(r.qr_id)
        cursor = res.body.next_cursor
        pages++
      } while (cursor)
      expect(pages).toBeGreaterThan(1)
      expect(seen.size).toBe(1000)
    }, 60_000)

  it('exports a library of large rows in full (chunks stay under the bus message limit)', async () => {
      const own = await freshMember(stack())
      // At the 8 KiB style limit, 1100 rows are about 9 MB of CSV: more than one bus message may carry.
      const style = { svg: 'x'.repeat(8150) }
      for (let batch = 0; batch < 22; batch++) {
        const qrcodes = Array.from({ length: 50 }, (_, i) => ({ ...item(batch * 50 + i), style }))
        expect((await api('POST', '/v1/qrcodes/batch', own.key, { qrcodes })).status).toBe(201)
      }
      const res = await api('GET', '/v1/qrcodes/export', own.key)
      expect(res.status).toBe(200)
      const rows = res.text.split('\r\n').slice(1, -1)
      expect(rows).toHaveLength(1100)
      expect(new Set(rows.map((row) => row.split(',')[0])).size).toBe(1100)
    }, 30_000)
  })
}
