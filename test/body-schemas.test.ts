// One schema, three uses: the gateway documents a request body with the @lr/proto schema object
// that the owning service compiles into its validator. Identity, not equality: they cannot drift.
import { describe, expect, it } from 'bun:test'
import { createGateway } from '@lr/gateway'
import { createDynamicService, createSqliteDynamicStore } from '@lr/dynamic'
import { createRecordsService, createSqliteRecordStore } from '@lr/records'
import { createLocalBus } from '@lr/platform/bus-local'
import { openSqlite } from '@lr/platform/sqlite'
import { BATCH_MAX, DynamicBatchBody, DynamicCreateBody, DynamicPatchBody, StaticBatchBody, StaticCreateBody, StaticPatchBody } from '@lr/proto'

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

  it('reads each batch envelope from the documented batch schema, whose items are the create schema', () => {
    expect(documentedBody('POST', '/v1/qrcodes/batch')).toBe(StaticBatchBody)
    expect(records.checks.batch).toEqual({ key: 'qrcodes', bareArray: false, minItems: 1, maxItems: BATCH_MAX, item: StaticCreateBody })
    expect(records.checks.batch.item).toBe(records.checks.create.schema)
    expect(documentedBody('POST', '/v1/dynqrcodes/batch')).toBe(DynamicBatchBody)
    expect(dynamic.checks.batch).toEqual({ key: 'dynqrcodes', bareArray: true, minItems: 1, maxItems: BATCH_MAX, item: DynamicCreateBody })
    expect(dynamic.checks.batch.item).toBe(dynamic.checks.create.schema)
  })

  for (const [method, path, exported, validated] of cases) {
    it(`${method} ${path} documents the very schema object its service validates with`, () => {
      expect(documentedBody(method, path)).toBe(exported)
      expect(validated).toBe(exported)
    })
  }
})
