import { Elysia } from 'elysia'
import { Type as T } from '@sinclair/typebox'
import { type Bus, Created, DYNAMIC_SUBJECTS as S, DynamicBatchBody, DynamicCreateBody, DynamicList, DynamicPatchBody, DynamicRecord } from '@lr/proto'
import { createRequest, ifMatchOf, principalOf } from '../context'
import { tagged } from './etag'
import { csvResponse } from './csv-stream'
import { doc, queryOf } from './openapi'

const tag = 'Dynamic QR codes'
const Deleted = T.Object({ deleted: T.String() })

/** /v1/dynqrcodes: each route forwards to services/dynamic and returns its answer. */
export const dynamicRoutes = (bus: Bus) =>
  new Elysia({ name: 'dynamic-routes', prefix: '/v1/dynqrcodes' })
    .get('', ({ request }) => bus.request(S.list, { principal: principalOf(request), query: queryOf(request) }),
      { detail: doc(tag, 'List dynamic QR codes (cursor paging, status filter)', { ok: DynamicList }) })
    .post('', ({ request, body, set }) => {
      set.status = 201
      return bus.request(S.create, createRequest(request, body))
    }, { detail: doc(tag, 'Create a dynamic QR code', { body: DynamicCreateBody, ok: Created(DynamicRecord), status: 201 }) })
    .post('/batch', ({ request, body, set }) => {
      set.status = 201
      return bus.request(S.batch, createRequest(request, body))
    }, { detail: doc(tag, 'Create up to 50 dynamic QR codes, all or nothing', { body: DynamicBatchBody, ok: Created(DynamicRecord), status: 201 }) })
    .get('/export', ({ request }) => csvResponse(bus, S.export, { principal: principalOf(request) }, 'dynqrcodes.csv'),
      { detail: doc(tag, 'Export every dynamic QR code as CSV', { csv: true }) })
    .get('/:code', ({ request, params, set }) => tagged(request, set, bus.request(S.get, { principal: principalOf(request), id: params.code })),
      { detail: doc(tag, 'Get one dynamic QR code', { ok: DynamicRecord }) })
    .patch('/:code', ({ request, params, body, set }) => tagged(request, set, bus.request(S.update, { principal: principalOf(request), id: params.code, body, ...ifMatchOf(request) })),
      { detail: doc(tag, 'Change destination_url, name, status or style', { body: DynamicPatchBody, ok: DynamicRecord }) })
    .delete('/:code', ({ request, params }) => bus.request(S.delete, { principal: principalOf(request), id: params.code, ...ifMatchOf(request) }),
      { detail: doc(tag, 'Soft-delete a dynamic QR code: it stops resolving (410), its code is never reissued', { ok: Deleted }) })
