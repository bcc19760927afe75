import type { TObject, TSchema } from '@sinclair/typebox'
import { exampleMap, headerRefs, LIMIT_HEADERS, type ParameterName, type ResponseName } from './openapi-components'
import { requestUrlOf } from '@lr/platform/request-url'

/** What one route tells the OpenAPI document; `doc` turns it into the operation. */
export interface OperationDoc {
  /** Stable and readable: the name generated clients give the call (listStaticCodes). */
  operationId: string
  tag: string
  summary: string
  description?: string
  /** Path parameters: name -> description. */
  path?: Record<string, string>
  /** The query string as a @lr/proto schema: one query parameter per property. */
  query?: TObject
  /** The JSON body: the very @lr/proto schema object the owning service validates with. */
  body?: TSchema
  bodyExamples?: Record<string, unknown>
  /** The success answer: a @lr/proto schema (JSON), or CSV with its columns. */
  ok: TSchema | { csv: readonly string[] }
  okExamples?: Record<string, unknown>
  /** What the success answer is; `status` 201 for creates. */
  answer: string
  status?: 200 | 201
  /** A create: takes Idempotency-Key (422 on reuse); `batch` answers item failures as `{"errors"}`, `single` a Location. */
  create?: 'single' | 'batch'
  /** Another POST that takes Idempotency-Key (422 on reuse); every create does. */
  idempotent?: boolean
  /**
   * One record: `read` answers its ETag and honours If-None-Match (304); `write` honours If-Match
   * (412) and answers the new ETag; `delete` honours If-Match (412) and answers no ETag (nothing
   * is left to tag).
   */
  conditional?: 'read' | 'write' | 'delete'
  /** 404 when the id is not in the key's library. */
  notFound?: boolean
  /** 409 when the request does not fit the record's state. */
  conflict?: boolean
}

const ref = (name: ResponseName) => ({ $ref: `#/components/responses/${name}` })
const param = (name: ParameterName) => ({ $ref: `#/components/parameters/${name}` })

/** One query parameter per property of a @lr/proto query schema. */
function queryParameters(query: TObject) {
  return Object.entries(query.properties).map(([name, schema]) => ({
    name,
    in: 'query',
    required: query.required?.includes(name) ?? false,
    description: schema.description,
    schema,
    ...(schema.examples ? { example: (schema.examples as unknown[])[0] } : {}),
  }))
}

function success(op: OperationDoc) {
  if ('csv' in op.ok) {
    const header = op.ok.csv.join(',')
    return {
      description: `${op.answer} RFC 4180: a header row (also with no rows), CRLF, UTF-8; streamed. Columns: \`${header}\`.`,
      headers: headerRefs(...LIMIT_HEADERS, 'Content-Disposition'),
      content: { 'text/csv': { schema: { type: 'string' }, example: `${header}\r\n` } },
    }
  }
  const extra = [...(op.conditional === 'read' || op.conditional === 'write' ? (['ETag'] as const) : []), ...(op.create === 'single' ? (['Location'] as const) : [])]
  return {
    description: op.answer,
    headers: headerRefs(...LIMIT_HEADERS, ...extra),
    content: { 'application/json': { schema: op.ok, ...(op.okExamples ? { examples: exampleMap(op.okExamples) } : {}) } },
  }
}

/**
 * The OpenAPI `detail` of one route: parameters, body, the success answer and every error the
 * route can answer, with their headers (docs/decisions.md §8). Bodies are documented, not
 * validated here: the owning service validates with the same schema object. Typed loosely:
 * Elysia types `detail` as OpenAPI 3.0, and these are 3.1 schemas (TypeBox writes 2020-12).
 */
export function doc(op: OperationDoc): Record<string, unknown> {
  const errors: Partial<Record<string, unknown>> = {}
  if (op.conditional === 'read') errors['304'] = ref('NotModified')
  // Every route answers 400: a bad query, body or header, and a query where it takes none.
  errors['400'] = ref(op.create === 'batch' ? 'BadBatch' : 'BadRequest')
  errors['403'] = ref('Forbidden')
  if (op.notFound) errors['404'] = ref('NotFound')
  if (op.conflict) errors['409'] = ref('Conflict')
  // A GET or HEAD with an If-Match that names another version is 412 too (etag.ts).
  if (op.conditional) errors['412'] = ref('PreconditionFailed')
  if (op.body) Object.assign(errors, { '413': ref('PayloadTooLarge'), '415': ref('UnsupportedMediaType') })
  const idempotent = Boolean(op.create || op.idempotent)
  if (idempotent) errors['422'] = ref('IdempotencyConflict')
  Object.assign(errors, { '429': ref('RateLimited'), '503': ref('Unavailable'), '504': ref('Timeout') })
  const headerParams = [
    ...(idempotent ? [param('IdempotencyKey')] : []),
    ...(op.conditional === 'read' ? [param('IfNoneMatch')] : []),
    ...(op.conditional ? [param('IfMatch')] : []),
    param('RequestId'),
  ]
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    security: [{ apiKey: [] }],
    parameters: [
      ...Object.entries(op.path ?? {}).map(([name, description]) => ({ name, in: 'path', required: true, description, schema: { type: 'string' } })),
      ...(op.query ? queryParameters(op.query) : []),
      ...headerParams,
    ],
    ...(op.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: op.body, ...(op.bodyExamples ? { examples: exampleMap(op.bodyExamples) } : {}) } } } }
      : {}),
    responses: { [String(op.status ?? 200)]: success(op), ...errors },
  }
}

/** The query string as the services expect it: one string per name, or all of them (in order) for a name given more than once. */
export function queryOf(request: Request): Record<string, string | string[]> {
  // No prototype: on a plain object `query.__proto__ = 'x'` sets nothing, so `?__proto__=x` passed
  // as no parameter at all where every other unknown name is a 400.
  const query: Record<string, string | string[]> = Object.create(null)
  for (const [name, value] of requestUrlOf(request.url).searchParams) {
    const seen = Object.hasOwn(query, name) ? query[name]! : undefined
    query[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value]
  }
  return query
}
