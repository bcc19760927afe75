import { Elysia } from 'elysia'
import { Type as T } from '@sinclair/typebox'
import { type Bus, Created, RECORDS_SUBJECTS as S, StaticBatchBody, StaticCreateBody, StaticList, StaticPatchBody, StaticRecord } from '@lr/proto'
import { createRequest, ifMatchOf, principalOf } from '../context'
import { tagged } from './etag'
import { csvResponse } from './csv-stream'
import { doc, queryOf } from './openapi'

const tag = 'Static QR codes'
const Deleted = T.Object({ deleted: T.String() })

/** /v1/qrcodes: each route forwards to services/records and returns its answer. */
export const staticRoutes = (bus: Bus) =>
  new Elysia({ name: 'static-routes', prefix: '/v1/qrcodes' })
    .get('', ({ request }) => bus.request(S.list, { principal: principalOf(request), query: queryOf(request) }),
      { detail: doc(tag, 'List static QR codes (cursor paging)', { ok: StaticList }) })
    .post('', ({ request, body, set }) => {
      set.status = 201
      return bus.request(S.create, createRequest(request, body))
    }, { detail: doc(tag, 'Create a static QR code', { body: StaticCreateBody, ok: Created(StaticRecord), status: 201 }) })
    .post('/batch', ({ request, body, set }) => {
      set.status = 201
      return bus.request(S.batch, createRequest(request, body))
    }, { detail: doc(tag, 'Create up to 50 static QR codes, all or nothing', { body: StaticBatchBody, ok: Created(StaticRecord), status: 201 }) })
    .get('/export', ({ request }) => csvResponse(bus, S.export, { principal: principalOf(request) }, 'qrcodes.csv'),
      { detail: doc(tag, 'Export every static QR code as CSV', { csv: true }) })
    .get('/:qr_id', ({ request, params, set }) => tagged(request, set, bus.request(S.get, { principal: principalOf(request), id: params.qr_id })),
      { detail: doc(tag, 'Get one static QR code', { ok: StaticRecord }) })
    .patch('/:qr_id', ({ request, params, body, set }) => tagged(request, set, bus.request(S.update, { principal: principalOf(request), id: params.qr_id, body, ...ifMatchOf(request) })),
      { detail: doc(tag, 'Change url, name, status or style', { body: StaticPatchBody, ok: StaticRecord }) })
    .delete('/:qr_id', ({ request, params }) => bus.request(S.delete, { principal: principalOf(request), id: params.qr_id, ...ifMatchOf(request) }),
      { detail: doc(tag, 'Delete a static QR code', { ok: Deleted }) })
