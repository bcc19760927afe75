import { Elysia } from 'elysia'
import { type Bus, DYNAMIC_EXPORT_COLUMNS, DYNAMIC_SUBJECTS, DynamicBatchBody, DynamicCreateBody, DynamicCreated, DynamicList, DynamicListQuery, DynamicPatchBody, DynamicRecord, ReviewBody } from '@lr/proto'
import { idempotencyKeyOf, ifMatchOf, noQuery, principalOf } from '../context'
import { tagged } from './etag'
import { libraryRoutes } from './library'
import { doc } from './openapi'
import { examples } from './openapi-examples'

const approval = 'In a team library only a team admin\'s key may move a record from `draft` to `active` (a writer gets 403).'
const reviewed = 'A writer\'s change of `destination_url`, `redirect_rules` or `fallback_url` of an `active` code in a team library does not take effect: the answer (200) is the record unchanged with `pending_change`, which a team admin approves or rejects (POST .../review); a later writer\'s change replaces it, one back to the approved values withdraws it. Other fields apply at once. An admin\'s change applies at once and drops a pending change, as does a move to `draft`.'

const reviewDoc = doc({
  operationId: 'reviewDynamicCode', tag: 'Dynamic QR codes', summary: 'Approve or reject the pending change of a team code',
  description: 'Team admins only (a writer gets 403). `approve` applies the pending destination_url, redirect_rules and fallback_url (the very next scan follows them); `reject` drops them. 409 when the code has no pending change, or for a personal key (personal libraries have no reviews). With If-Match, only the version named (so a change replaced meanwhile is not approved unseen). With Idempotency-Key, a retry answers the first decision again instead of a 409.',
  path: { code: 'The record\'s code (the last part of its short_url).' },
  body: ReviewBody, bodyExamples: examples.dynamic.review,
  ok: DynamicRecord, okExamples: examples.dynamic.record, answer: 'The record after the decision, without pending_change.',
  conditional: 'write', notFound: true, conflict: true, idempotent: true,
})
const expiry = 'Optional `expires_at` (epoch seconds), `max_scans` (counted scans before the code is capped) and `fallback_url`: once expired or capped the short link redirects to `fallback_url` (counted as `fallback_scans`, not as a scan), or answers 410 without one (README "Expiring and capped codes").'

/** /v1/dynqrcodes: each route forwards to services/dynamic and returns its answer. */
export const dynamicRoutes = (bus: Bus) => new Elysia({ name: 'dynamic-routes' })
  .use(dynamicLibraryRoutes(bus))
  .post('/v1/dynqrcodes/:code/review', ({ request, params, body, set }) =>
    (noQuery(request), tagged(request, set, bus.request(DYNAMIC_SUBJECTS.review, { principal: principalOf(request), id: params.code, body, ...ifMatchOf(request), ...idempotencyKeyOf(request) }))),
    { detail: reviewDoc })

const dynamicLibraryRoutes = (bus: Bus) => libraryRoutes(bus, {
  prefix: '/v1/dynqrcodes',
  subjects: DYNAMIC_SUBJECTS,
  routeWords: ['analytics'],
  tag: 'Dynamic QR codes',
  id: 'code',
  idText: 'The record\'s code (the last part of its short_url).',
  schemas: { query: DynamicListQuery, list: DynamicList, created: DynamicCreated, record: DynamicRecord, create: DynamicCreateBody, batch: DynamicBatchBody, patch: DynamicPatchBody },
  examples: examples.dynamic,
  export: { columns: DYNAMIC_EXPORT_COLUMNS, filename: 'dynqrcodes.csv', answer: 'Every live record of the library, oldest first (file dynqrcodes.csv).' },
  texts: {
    list: { operationId: 'listDynamicCodes', summary: 'List dynamic QR codes' },
    create: {
      operationId: 'createDynamicCode', summary: 'Create a dynamic QR code',
      description: `A personal key creates an \`active\` record; a business key a \`draft\` in the team library. \`code\` is 8 random characters of \`[0-9A-Za-z]\`, never reissued. ${expiry}`,
    },
    batch: {
      operationId: 'createDynamicCodes', summary: 'Create up to 50 dynamic QR codes, all or nothing',
      description: 'The body is a bare array or `{"dynqrcodes": [...]}`. Any invalid item: 400 `{"errors": [{index, error}]}` naming every failing item, and nothing is created.',
    },
    export: { operationId: 'exportDynamicCodes', summary: 'Export every dynamic QR code as CSV' },
    get: { operationId: 'getDynamicCode', summary: 'Get one dynamic QR code' },
    update: {
      operationId: 'updateDynamicCode', summary: 'Change destination_url, redirect_rules, name, status, style, tags, expires_at, max_scans or fallback_url',
      description: `The very next scan follows a new destination. ${approval} ${reviewed} \`null\` clears \`expires_at\`, \`max_scans\` or \`fallback_url\`; raising \`max_scans\` or moving \`expires_at\` re-opens the code at its next scan.`,
    },
    delete: {
      operationId: 'deleteDynamicCode', summary: 'Soft-delete a dynamic QR code', answer: 'The code deleted.',
      description: 'It stops resolving (410) and leaves lists and the analytics summary; its code is never reissued and its scan history is kept.',
    },
  },
})
