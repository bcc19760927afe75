import { Elysia } from 'elysia'
import { type Bus, Deleted, RECORDS_SUBJECTS as S, STATIC_EXPORT_COLUMNS, StaticBatchBody, StaticCreateBody, StaticCreated, StaticList, StaticListQuery, StaticPatchBody, StaticRecord } from '@lr/proto'
import { createRequest, ifMatchOf, principalOf } from '../context'
import { tagged } from './etag'
import { csvResponse } from './csv-stream'
import { locatedCreate } from './location'
import { doc, queryOf } from './openapi'
import { examples } from './openapi-examples'

const tag = 'Static QR codes'
const ex = examples.static
const path = { qr_id: 'The record\'s qr_id.' }
const paging = 'Oldest first, stable while others insert: walking every page gives every record once. Page until `next_cursor` is null; `updated_since` fetches only what changed since a sync.'

/** The OpenAPI entry of each route (openapi.ts). */
const docs = {
  list: doc({ operationId: 'listStaticCodes', tag, summary: 'List static QR codes', description: paging, query: StaticListQuery, ok: StaticList, okExamples: ex.list, answer: 'One page of records.' }),
  create: doc({
    operationId: 'createStaticCode', tag, summary: 'Create a static QR code', create: 'single',
    description: 'A personal key creates an `active` record; a business key a `draft` in the team library.',
    body: StaticCreateBody, bodyExamples: ex.create, status: 201, ok: StaticCreated, okExamples: ex.created, answer: 'The record created.',
  }),
  batch: doc({
    operationId: 'createStaticCodes', tag, summary: 'Create up to 50 static QR codes, all or nothing', create: 'batch',
    description: 'Any invalid item: 400 `{"errors": [{index, error}]}` naming every failing item, and nothing is created.',
    body: StaticBatchBody, bodyExamples: ex.batch, status: 201, ok: StaticCreated, okExamples: ex.created, answer: 'The records created, in the order sent.',
  }),
  export: doc({
    operationId: 'exportStaticCodes', tag, summary: 'Export every static QR code as CSV', answer: 'Every record of the library, oldest first (file qrcodes.csv).',
    ok: { csv: STATIC_EXPORT_COLUMNS },
  }),
  get: doc({ operationId: 'getStaticCode', tag, summary: 'Get one static QR code', path, ok: StaticRecord, okExamples: ex.record, answer: 'The record.', conditional: 'read', notFound: true }),
  update: doc({
    operationId: 'updateStaticCode', tag, summary: 'Change url, name, status or style', path, conditional: 'write', notFound: true,
    description: 'In a team library only a team admin\'s key may move a record from `draft` to `active` (a writer gets 403).',
    body: StaticPatchBody, bodyExamples: ex.patch, ok: StaticRecord, okExamples: ex.record, answer: 'The updated record.',
  }),
  delete: doc({
    operationId: 'deleteStaticCode', tag, summary: 'Delete a static QR code', path, notFound: true,
    description: 'It leaves every route but `include_deleted=true` lists, which show its tombstone `{qr_id, deleted_at, updated_at}`; its id is never reused.',
    ok: Deleted, okExamples: ex.deleted, answer: 'The id of the record deleted.',
  }),
}

/** /v1/qrcodes: each route forwards to services/records and returns its answer. */
export const staticRoutes = (bus: Bus) =>
  new Elysia({ name: 'static-routes', prefix: '/v1/qrcodes' })
    .get('', ({ request }) => bus.request(S.list, { principal: principalOf(request), query: queryOf(request) }),
      { detail: docs.list })
    .post('', ({ request, body, set }) => {
      set.status = 201
      return locatedCreate(set, '/v1/qrcodes', (record: StaticRecord) => record.qr_id, bus.request(S.create, createRequest(request, body)))
    }, { detail: docs.create })
    .post('/batch', ({ request, body, set }) => {
      set.status = 201
      return bus.request(S.batch, createRequest(request, body))
    }, { detail: docs.batch })
    .get('/export', ({ request }) => csvResponse(bus, S.export, { principal: principalOf(request) }, 'qrcodes.csv'),
      { detail: docs.export })
    .get('/:qr_id', ({ request, params, set }) => tagged(request, set, bus.request(S.get, { principal: principalOf(request), id: params.qr_id })),
      { detail: docs.get })
    .patch('/:qr_id', ({ request, params, body, set }) => tagged(request, set, bus.request(S.update, { principal: principalOf(request), id: params.qr_id, body, ...ifMatchOf(request) })),
      { detail: docs.update })
    .delete('/:qr_id', ({ request, params }) => bus.request(S.delete, { principal: principalOf(request), id: params.qr_id, ...ifMatchOf(request) }),
      { detail: docs.delete })
