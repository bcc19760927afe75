import { describe, expect, it } from 'bun:test'
import { badRequest, failure, personal, setup, writer } from './fixtures'

const item = (n: number) => ({ destination_url: `https://example.com/${n}`, name: `Code ${n}` })
const items = (count: number) => Array.from({ length: count }, (_, i) => item(i))

describe('batch', () => {
  it('creates every item of a bare array in the order sent, with the fields of a single create', async () => {
    const { service } = setup()
    const { created } = await service.batch(writer, [item(1), { ...item(2), style: { c: 1 } }])
    expect(created.map((r) => [r.name, r.destination_url, r.style, r.status, r.team_id, r.created_by])).toEqual([
      ['Code 1', 'https://example.com/1', {}, 'draft', 'team_1', 'acct_w'],
      ['Code 2', 'https://example.com/2', { c: 1 }, 'draft', 'team_1', 'acct_w'],
    ])
    expect((await service.list(writer, {})).dynqrcodes).toEqual(created)
  })

  it('accepts {"dynqrcodes": [...]} the same way', async () => {
    const { service } = setup()
    const { created } = await service.batch(personal, { dynqrcodes: [item(1), item(2)] })
    expect(created.map((r) => r.name)).toEqual(['Code 1', 'Code 2'])
  })

  it('accepts exactly 50 items and announces each', async () => {
    const { service, announced } = setup()
    expect((await service.batch(personal, items(50))).created).toHaveLength(50)
    expect(announced).toHaveLength(50)
  })

  const rejected: [string, unknown, string][] = [
    ['more than 50 items', items(51), 'a batch holds at most 50 items; this one has 51'],
    ['more than 50 wrapped items', { dynqrcodes: items(51) }, 'a batch holds at most 50 items; this one has 51'],
    ['an empty array', [], 'dynqrcodes must hold at least one item'],
    ['dynqrcodes that is not an array', { dynqrcodes: item(1) }, 'dynqrcodes must be an array of 1 to 50 items'],
    ['an object without dynqrcodes', {}, 'dynqrcodes is required: an array of 1 to 50 items'],
    ['the static batch key', { qrcodes: [item(1)] }, 'unknown field "qrcodes"'],
    ['a string', 'items', 'body must be a JSON array of 1 to 50 items, or an object with "dynqrcodes"'],
  ]
  for (const [what, body, message] of rejected) {
    it(`rejects ${what} with one 400 "${message}"`, async () => {
      const { service } = setup()
      expect(await failure(service.batch(personal, body))).toEqual(badRequest(message))
    })
  }

  it('names every failing item by index, stores nothing and announces nothing', async () => {
    const { service, announced } = setup()
    const body = [item(0), { destination_url: 'ftp://x.example', name: 'a' }, item(2), { destination_url: 'https://x.example' }, { ...item(4), code: 'Mine1234' }, 7]
    expect(await failure(service.batch(personal, body))).toEqual({
      code: 'batch_invalid',
      message: 'one or more items are invalid',
      details: {
        items: [
          { index: 1, error: 'destination_url must be an absolute http or https URL with a host' },
          { index: 3, error: 'name is required' },
          { index: 4, error: 'unknown field "code"' },
          { index: 5, error: 'item must be a JSON object' },
        ],
      },
    })
    expect((await service.list(personal, {})).dynqrcodes).toEqual([])
    expect(announced).toEqual([])
  })

  it('creates each item exactly once when the fixed batch is retried', async () => {
    const { service } = setup()
    await failure(service.batch(personal, [item(0), { destination_url: 'nope', name: 'x' }]))
    await service.batch(personal, [item(0), item(1)])
    expect((await service.list(personal, {})).dynqrcodes.map((r) => r.name)).toEqual(['Code 0', 'Code 1'])
  })
})
