import { Elysia, NotFoundError } from 'elysia'
import type { TObject, TSchema } from '@sinclair/typebox'
import { type Bus, Deleted } from '@lr/proto'
import { createRequest, ifMatchOf, noQuery, principalOf } from '../context'
import { tagged } from './etag'
import { csvResponse } from './csv-stream'
import { readyJson } from '../ready-json'
import { createKeptPages } from '../kept-pages'
import { doc, type OperationDoc, queryOf } from './openapi'

const paging = 'Oldest first, stable while others insert: walking every page gives every record once. Page until `next_cursor` is null; `updated_since` fetches only what changed since a sync.'

/** What one kind says of one of its routes in the document; the rest is the same for both kinds. */
type Texts = Pick<OperationDoc, 'operationId' | 'summary' | 'description'>

/** What a kind of library record (static, dynamic) brings to its seven routes. */
export interface LibraryParts {
  prefix: string
  subjects: { list: string; create: string; batch: string; export: string; get: string; update: string; delete: string }
  tag: string
  /** The path parameter of one record, which is also the id field of the record a create answers. */
  id: string
  idText: string
  schemas: { query: TObject; list: TSchema; created: TSchema; record: TSchema; create: TSchema; batch: TSchema; patch: TSchema }
  examples: Record<'list' | 'created' | 'record' | 'create' | 'batch' | 'patch' | 'deleted', Record<string, unknown>>
  export: { columns: readonly string[]; filename: string; answer: string }
  texts: Record<'list' | 'create' | 'batch' | 'export' | 'get' | 'update', Texts> & { delete: Texts & { answer: string } }
  /** Segments under the prefix that other routes serve (besides `batch` and `export`, which these do). */
  routeWords?: readonly string[]
}

/** The OpenAPI entry of each route (openapi.ts). */
function docsOf({ tag, id, idText, schemas: s, examples: ex, export: csv, texts }: LibraryParts) {
  const path = { [id]: idText }
  return {
    list: doc({ ...texts.list, tag, description: paging, query: s.query, ok: s.list, okExamples: ex.list, answer: 'One page of records.' }),
    create: doc({ ...texts.create, tag, create: 'single', body: s.create, bodyExamples: ex.create, status: 201, ok: s.created, okExamples: ex.created, answer: 'The record created.' }),
    batch: doc({ ...texts.batch, tag, create: 'batch', body: s.batch, bodyExamples: ex.batch, status: 201, ok: s.created, okExamples: ex.created, answer: 'The records created, in the order sent.' }),
    export: doc({ ...texts.export, tag, ok: { csv: csv.columns }, answer: csv.answer }),
    get: doc({ ...texts.get, tag, path, ok: s.record, okExamples: ex.record, answer: 'The record.', conditional: 'read', notFound: true }),
    update: doc({ ...texts.update, tag, path, conditional: 'write', notFound: true, body: s.patch, bodyExamples: ex.patch, ok: s.record, okExamples: ex.record, answer: 'The updated record.' }),
    delete: doc({ ...texts.delete, tag, path, conditional: 'delete', notFound: true, ok: Deleted, okExamples: ex.deleted }),
  }
}

/** The routes of one kind of library record: each forwards to the kind's service and returns its answer. */
export function libraryRoutes(bus: Bus, parts: LibraryParts) {
  const { prefix, subjects: S, id } = parts
  const docs = docsOf(parts)
  const one = `/:${id}`
  // The id of a route's params or of a created record (one name for both). Elysia types the
  // params of a literal path only, and `one` is built.
  const idOf = (record: object) => (record as Record<string, string>)[id]!
  // A segment with routes of its own under the prefix (`batch`, `export`; `analytics` for dynamic
  // codes) is never an id: the param routes give it to the router's not-found, which answers 405
  // with the methods its own routes serve (method-not-allowed.ts).
  const routeWords = new Set(['batch', 'export', ...(parts.routeWords ?? [])])
  const routeWord = (params: object) => {
    if (routeWords.has(idOf(params))) throw new NotFoundError()
    return idOf(params)
  }
  const listPage = createKeptPages(bus)
  return new Elysia({ name: `library-routes ${prefix}`, prefix })
    // A page of up to 1000 records: its JSON goes out as the service wrote it (or as this
    // gateway kept it, when the service says it has not changed: kept-pages.ts).
    .get('', async ({ request }) => readyJson(await listPage(S.list, principalOf(request), queryOf(request))),
      { detail: docs.list })
    .post('', async ({ request, body, set }) => {
      noQuery(request)
      set.status = 201
      const answer = await bus.request<{ created: object[] }>(S.create, createRequest(request, body))
      // Where the new record lives (docs/decisions.md §10), relative to this API so it stays right
      // behind any proxy. A replay (same Idempotency-Key) answers the same record, so the same Location.
      if (answer.created.length === 1) set.headers.location = `${prefix}/${encodeURIComponent(idOf(answer.created[0]!))}`
      return answer
    }, { detail: docs.create })
    .post('/batch', ({ request, body, set }) => {
      noQuery(request)
      set.status = 201
      return bus.request(S.batch, createRequest(request, body))
    }, { detail: docs.batch })
    .get('/export', ({ request }) => (noQuery(request), csvResponse(bus, S.export, { principal: principalOf(request) }, parts.export.filename, request)),
      { detail: docs.export })
    .get(one, ({ request, params, set }) => (noQuery(request), tagged(request, set, bus.request(S.get, { principal: principalOf(request), id: routeWord(params) }))),
      { detail: docs.get })
    .patch(one, ({ request, params, body, set }) => (noQuery(request), tagged(request, set, bus.request(S.update, { principal: principalOf(request), id: routeWord(params), body, ...ifMatchOf(request) }))),
      { detail: docs.update })
    .delete(one, ({ request, params }) => (noQuery(request), bus.request(S.delete, { principal: principalOf(request), id: routeWord(params), ...ifMatchOf(request) })),
      { detail: docs.delete })
}
