// One schema, three uses: the gateway documents a request body with the @lr/proto schema object
// that the owning service compiles into its validator. Identity, not equality: they cannot drift.
import { describe, expect, it } from 'bun:test'
import { createGateway } from '@lr/gateway'
import { createDynamicService, createSqliteDynamicStore } from '@lr/dynamic'
import { createRecordsService, createSqliteRecordStore } from '@lr/records'
import { createLocalBus } from '@lr/platform/bus-local'
import { openSqlite } from '@lr/platform/sqlite'
import { DynamicCreateBody, DynamicPatchBody, StaticCreateBody, StaticPatchBody } from '@lr/proto'

const gateway = createGateway({ bus: createLocalBus() })
/** The schema object a route hands to OpenAPI as its JSON request body. */
function documentedBody(method: string, path: string): unknown {
  const route = gateway.routes.find((r) => r.method === method && r.path === path)
  const detail = (route?.hooks as { detail?: { requestBody?: { content: Record<string, { schema: unknown }> } } })?.detail
  return detail?.requestBody?.content['application/json']?.schema
}

const now = () => 1_700_000_000
const records = createRecordsService({ store: createSqliteRecordStore(openSqlite(':memory:')), now })
const dynamic = createDynamicService({ store: createSqliteDynamicStore(openSqlite(':memory:')), now, shortBaseUrl: 'https://qr.example' })

describe('request body schemas', () => {
  const cases = [
    ['POST', '/v1/qrcodes', StaticCreateBody, records.checks.create.schema],
    ['PATCH', '/v1/qrcodes/:qr_id', StaticPatchBody, records.checks.patch.schema],
    ['POST', '/v1/dynqrcodes', DynamicCreateBody, dynamic.checks.create.schema],
    ['PATCH', '/v1/dynqrcodes/:code', DynamicPatchBody, dynamic.checks.patch.schema],
  ] as const

  it('documents batch items with the create schema that each item is validated with', () => {
    const items = (batch: unknown) => (batch as { properties: Record<string, { items: unknown }> }).properties
    expect(items(documentedBody('POST', '/v1/qrcodes/batch')).qrcodes!.items).toBe(records.checks.create.schema)
    const dynamicBatch = documentedBody('POST', '/v1/dynqrcodes/batch') as { anyOf: { items: unknown }[] }
    expect(dynamicBatch.anyOf[0]!.items).toBe(dynamic.checks.create.schema)
  })

  for (const [method, path, exported, validated] of cases) {
    it(`${method} ${path} documents the very schema object its service validates with`, () => {
      expect(documentedBody(method, path)).toBe(exported)
      expect(validated).toBe(exported)
    })
  }
})
