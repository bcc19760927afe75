import { Elysia } from 'elysia'
import { type Bus, Deleted, DYNAMIC_EXPORT_COLUMNS, DYNAMIC_SUBJECTS as S, DynamicBatchBody, DynamicCreateBody, DynamicCreated, DynamicList, DynamicListQuery, DynamicPatchBody, DynamicRecord } from '@lr/proto'
import { createRequest, ifMatchOf, principalOf } from '../context'
import { tagged } from './etag'
import { csvResponse } from './csv-stream'
import { locatedCreate } from './location'
import { doc, queryOf } from './openapi'
import { examples } from './openapi-examples'

const tag = 'Dynamic QR codes'
const ex = examples.dynamic
const path = { code: 'The record\'s code (the last part of its short_url).' }
const paging = 'Oldest first, stable while others insert: walking every page gives every record once. Page until `next_cursor` is null; `updated_since` fetches only what changed since a sync.'
const approval = 'In a team library only a team admin\'s key may move a record from `draft` to `active` (a writer gets 403).'

/** The OpenAPI entry of each route (openapi.ts). */
const docs = {
  list: doc({ operationId: 'listDynamicCodes', tag, summary: 'List dynamic QR codes', description: paging, query: DynamicListQuery, ok: DynamicList, okExamples: ex.list, answer: 'One page of records.' }),
  create: doc({
    operationId: 'createDynamicCode', tag, summary: 'Create a dynamic QR code', create: 'single',
    description: 'A personal key creates an `active` record; a business key a `draft` in the team library. `code` is 8 random characters of `[0-9A-Za-z]`, never reissued.',
    body: DynamicCreateBody, bodyExamples: ex.create, status: 201, ok: DynamicCreated, okExamples: ex.created, answer: 'The record created.',
  }),
  batch: doc({
    operationId: 'createDynamicCodes', tag, summary: 'Create up to 50 dynamic QR codes, all or nothing', create: 'batch',
    description: 'The body is a bare array or `{"dynqrcodes": [...]}`. Any invalid item: 400 `{"errors": [{index, error}]}` naming every failing item, and nothing is created.',
    body: DynamicBatchBody, bodyExamples: ex.batch, status: 201, ok: DynamicCreated, okExamples: ex.created, answer: 'The records created, in the order sent.',
  }),
  export: doc({
    operationId: 'exportDynamicCodes', tag, summary: 'Export every dynamic QR code as CSV', answer: 'Every live record of the library, oldest first (file dynqrcodes.csv).',
    ok: { csv: DYNAMIC_EXPORT_COLUMNS },
  }),
  get: doc({ operationId: 'getDynamicCode', tag, summary: 'Get one dynamic QR code', path, ok: DynamicRecord, okExamples: ex.record, answer: 'The record.', conditional: 'read', notFound: true }),
  update: doc({
    operationId: 'updateDynamicCode', tag, summary: 'Change destination_url, name, status or style', path, conditional: 'write', notFound: true,
    description: `The very next scan follows a new destination. ${approval}`,
    body: DynamicPatchBody, bodyExamples: ex.patch, ok: DynamicRecord, okExamples: ex.record, answer: 'The updated record.',
  }),
  delete: doc({
    operationId: 'deleteDynamicCode', tag, summary: 'Soft-delete a dynamic QR code', path, notFound: true,
    description: 'It stops resolving (410) and leaves lists and the analytics summary; its code is never reissued and its scan history is kept.',
    ok: Deleted, okExamples: ex.deleted, answer: 'The code deleted.',
  }),
}

/** /v1/dynqrcodes: each route forwards to services/dynamic and returns its answer. */
export const dynamicRoutes = (bus: Bus) =>
  new Elysia({ name: 'dynamic-routes', prefix: '/v1/dynqrcodes' })
    .get('', ({ request }) => bus.request(S.list, { principal: principalOf(request), query: queryOf(request) }),
      { detail: docs.list })
    .post('', ({ request, body, set }) => {
      set.status = 201
      return locatedCreate(set, '/v1/dynqrcodes', (record: DynamicRecord) => record.code, bus.request(S.create, createRequest(request, body)))
    }, { detail: docs.create })
    .post('/batch', ({ request, body, set }) => {
      set.status = 201
      return bus.request(S.batch, createRequest(request, body))
    }, { detail: docs.batch })
    .get('/export', ({ request }) => csvResponse(bus, S.export, { principal: principalOf(request) }, 'dynqrcodes.csv'),
      { detail: docs.export })
    .get('/:code', ({ request, params, set }) => tagged(request, set, bus.request(S.get, { principal: principalOf(request), id: params.code })),
      { detail: docs.get })
    .patch('/:code', ({ request, params, body, set }) => tagged(request, set, bus.request(S.update, { principal: principalOf(request), id: params.code, body, ...ifMatchOf(request) })),
      { detail: docs.update })
    .delete('/:code', ({ request, params }) => bus.request(S.delete, { principal: principalOf(request), id: params.code, ...ifMatchOf(request) }),
      { detail: docs.delete })
