import { describe, expect, it } from 'bun:test'
import { badRequest, failure, personal, setup, writer } from './fixtures'

const item = (n: number) => ({ url: `https://example.com/${n}`, name: `Code ${n}` })
const items = (count: number) => Array.from({ length: count }, (_, i) => item(i))

describe('batch', () => {
  it('creates every item in the order sent, with the fields of a single create', async () => {
    const { service } = setup()
    const { created } = await service.batch(writer, { qrcodes: [item(1), { ...item(2), style: { c: 1 } }] })
    expect(created.map((r) => [r.name, r.url, r.style, r.status, r.team_id, r.created_by])).toEqual([
      ['Code 1', 'https://example.com/1', {}, 'draft', 'team_1', 'acct_w'],
      ['Code 2', 'https://example.com/2', { c: 1 }, 'draft', 'team_1', 'acct_w'],
    ])
    expect(new Set(created.map((r) => r.qr_id)).size).toBe(2)
    expect((await service.list(writer, {})).qrcodes).toEqual(created)
  })

  it('accepts exactly 50 items', async () => {
    const { service } = setup()
    expect((await service.batch(personal, { qrcodes: items(50) })).created).toHaveLength(50)
  })

  const rejected: [string, unknown, string][] = [
    ['more than 50 items', { qrcodes: items(51) }, 'a batch holds at most 50 items; this one has 51'],
    ['an empty array', { qrcodes: [] }, 'qrcodes must hold at least one item'],
    ['qrcodes that is not an array', { qrcodes: item(1) }, 'qrcodes must be an array of 1 to 50 items'],
    ['a body without qrcodes', {}, 'qrcodes is required: an array of 1 to 50 items'],
    ['a bare array', [item(1)], 'body must be a JSON object with "qrcodes", an array of 1 to 50 items'],
    ['another top-level field', { qrcodes: [item(1)], dry_run: true }, 'unknown field "dry_run"'],
  ]
  for (const [what, body, message] of rejected) {
    it(`rejects ${what} with one 400 "${message}"`, async () => {
      const { service } = setup()
      expect(await failure(service.batch(personal, body))).toEqual(badRequest(message))
    })
  }

  it('rejects more than 50 items as a whole even when items are invalid too', async () => {
    const { service } = setup()
    expect(await failure(service.batch(personal, { qrcodes: Array(51).fill({}) })))
      .toEqual(badRequest('a batch holds at most 50 items; this one has 51'))
  })

  it('names every failing item by index and stores nothing', async () => {
    const { service } = setup()
    const body = { qrcodes: [item(0), { url: 'ftp://x.example', name: 'a' }, item(2), { url: 'https://x.example' }, { ...item(4), status: 'active' }, 'text'] }
    expect(await failure(service.batch(personal, body))).toEqual({
      code: 'batch_invalid',
      message: 'one or more items are invalid',
      details: {
        items: [
          { index: 1, error: 'url must be an absolute http or https URL with a host' },
          { index: 3, error: 'name is required' },
          { index: 4, error: 'unknown field "status"' },
          { index: 5, error: 'item must be a JSON object' },
        ],
      },
    })
    expect((await service.list(personal, {})).qrcodes).toEqual([])
  })

  it('creates each item exactly once when the fixed batch is retried', async () => {
    const { service } = setup()
    await failure(service.batch(personal, { qrcodes: [item(0), { url: 'nope', name: 'x' }] }))
    await service.batch(personal, { qrcodes: [item(0), item(1)] })
    expect((await service.list(personal, {})).qrcodes.map((r) => r.name)).toEqual(['Code 0', 'Code 1'])
  })
})
