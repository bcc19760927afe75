import { Elysia } from 'elysia'
import { type Bus, Deleted, DYNAMIC_SUBJECTS as S, DynamicBatchBody, DynamicCreateBody, DynamicCreated, DynamicList, DynamicListQuery, DynamicPatchBody, DynamicRecord } from '@lr/proto'
import { createRequest, principalOf } from '../context'
import { csvResponse } from './csv-stream'
import { doc, queryOf } from './openapi'
import { examples } from './openapi-examples'

const tag = 'Dynamic QR codes'
const ex = examples.dynamic
const code = { code: 'The record\'s code (the last part of its short_url).' }

/** /v1/dynqrcodes: each route forwards to services/dynamic and returns its answer. */
export const dynamicRoutes = (bus: Bus) =>
  new Elysia({ name: 'dynamic-routes', prefix: '/v1/dynqrcodes' })
    .get('', ({ request }) => bus.request(S.list, { principal: principalOf(request), query: queryOf(request) }),
      { detail: doc({ operationId: 'listDynamicCodes', tag, summary: 'List dynamic QR codes', description: 'Oldest first, stable while others insert: walking every page gives every record once. Page until `next_cursor` is null; `updated_since` fetches only what changed since a sync.', query: DynamicListQuery, ok: DynamicList, okExamples: ex.list, answer: 'One page of records.' }) })
    .post('', ({ request, body, set }) => {
      set.status = 201
      return bus.request(S.create, createRequest(request, body))
    }, { detail: doc({ operationId: 'createDynamicCode', tag, summary: 'Create a dynamic QR code', description: 'A personal key creates an `active` record; a business key a `draft` in the team library. `code` is 8 random characters of `[0-9A-Za-z]`, never reissued.', body: DynamicCreateBody, bodyExamples: ex.create, status: 201, ok: DynamicCreated, okExamples: ex.created, answer: 'The record created.', create: 'single' }) })
    .post('/batch', ({ request, body, set }) => {
      set.status = 201
      return bus.request(S.batch, createRequest(request, body))
    }, { detail: doc({ operationId: 'createDynamicCodes', tag, summary: 'Create up to 50 dynamic QR codes, all or nothing', description: 'The body is a bare array or `{"dynqrcodes": [...]}`. Any invalid item: 400 `{"errors": [{index, error}]}` naming every failing item, and nothing is created.', body: DynamicBatchBody, bodyExamples: ex.batch, status: 201, ok: DynamicCreated, okExamples: ex.created, answer: 'The records created, in the order sent.', create: 'batch' }) })
    .get('/export', ({ request }) => csvResponse(bus, S.export, { principal: principalOf(request) }, 'dynqrcodes.csv'),
      { detail: doc({ operationId: 'exportDynamicCodes', tag, summary: 'Export every dynamic QR code as CSV', ok: { csv: ['code', 'short_url', 'destination_url', 'name', 'status', 'team_id', 'created_by', 'style', 'created_at', 'updated_at'], filename: 'dynqrcodes.csv' }, answer: 'Every live record of the library, oldest first (file dynqrcodes.csv).' }) })
    .get('/:code', ({ request, params }) => bus.request(S.get, { principal: principalOf(request), id: params.code }),
      { detail: doc({ operationId: 'getDynamicCode', tag, summary: 'Get one dynamic QR code', path: code, ok: DynamicRecord, okExamples: ex.record, answer: 'The record.', conditional: 'read', notFound: true }) })
    .patch('/:code', ({ request, params, body }) => bus.request(S.update, { principal: principalOf(request), id: params.code, body }),
      { detail: doc({ operationId: 'updateDynamicCode', tag, summary: 'Change destination_url, name, status or style', description: 'The very next scan follows a new destination. In a team library only a team admin\'s key may move a record from `draft` to `active` (a writer gets 403).', path: code, body: DynamicPatchBody, bodyExamples: ex.patch, ok: DynamicRecord, okExamples: ex.record, answer: 'The updated record.', conditional: 'write', notFound: true }) })
    .delete('/:code', ({ request, params }) => bus.request(S.delete, { principal: principalOf(request), id: params.code }),
      { detail: doc({ operationId: 'deleteDynamicCode', tag, summary: 'Soft-delete a dynamic QR code', description: 'It stops resolving (410) and leaves lists and the analytics summary; its code is never reissued and its scan history is kept.', path: code, ok: Deleted, okExamples: ex.deleted, answer: 'The code deleted.', notFound: true }) })
