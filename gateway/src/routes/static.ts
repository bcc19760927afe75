import { type Bus, RECORDS_SUBJECTS, STATIC_EXPORT_COLUMNS, StaticBatchBody, StaticCreateBody, StaticCreated, StaticList, StaticListQuery, StaticPatchBody, StaticRecord } from '@lr/proto'
import { libraryRoutes } from './library'
import { examples } from './openapi-examples'

/** /v1/qrcodes: each route forwards to services/records and returns its answer. */
export const staticRoutes = (bus: Bus) => libraryRoutes(bus, {
  prefix: '/v1/qrcodes',
  subjects: RECORDS_SUBJECTS,
  tag: 'Static QR codes',
  id: 'qr_id',
  idText: 'The record\'s qr_id.',
  schemas: { query: StaticListQuery, list: StaticList, created: StaticCreated, record: StaticRecord, create: StaticCreateBody, batch: StaticBatchBody, patch: StaticPatchBody },
  examples: examples.static,
  export: { columns: STATIC_EXPORT_COLUMNS, filename: 'qrcodes.csv', answer: 'Every record of the library, oldest first (file qrcodes.csv).' },
  texts: {
    list: { operationId: 'listStaticCodes', summary: 'List static QR codes' },
    create: {
      operationId: 'createStaticCode', summary: 'Create a static QR code',
      description: 'A personal key creates an `active` record; a business key a `draft` in the team library.',
    },
    batch: {
      operationId: 'createStaticCodes', summary: 'Create up to 50 static QR codes, all or nothing',
      description: 'Any invalid item: 400 `{"errors": [{index, error}]}` naming every failing item, and nothing is created.',
    },
    export: { operationId: 'exportStaticCodes', summary: 'Export every static QR code as CSV' },
    get: { operationId: 'getStaticCode', summary: 'Get one static QR code' },
    update: {
      operationId: 'updateStaticCode', summary: 'Change url, name, status, style or tags',
      description: 'In a team library only a team admin\'s key may move a record from `draft` to `active` (a writer gets 403).',
    },
    delete: {
      operationId: 'deleteStaticCode', summary: 'Delete a static QR code', answer: 'The id of the record deleted.',
      description: 'It leaves every route but `include_deleted=true` lists, which show its tombstone `{qr_id, deleted_at, updated_at}`; its id is never reused.',
    },
  },
})
