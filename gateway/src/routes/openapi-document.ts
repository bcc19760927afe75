import {
  AnalyticsSummary, BatchErrorBody, BatchItemError, CodeBreakdown, CodeSummary, DailyCount, Deleted,
  DynamicBatchBody, DynamicCreateBody, DynamicCreated, DynamicList, DynamicPatchBody, DynamicRecord, DynamicTombstone, ErrorBody,
  StaticBatchBody, StaticCreateBody, StaticCreated, StaticList, StaticPatchBody, StaticRecord, StaticTombstone, Status,
  NOT_BLANK, WebhookAttempt, WebhookCreateBody, WebhookCreated, WebhookDeliveries, WebhookEndpoint, WebhookList,
} from '@lr/proto'
import { headers, parameters, responses, securitySchemes, tags } from './openapi-components'

/**
 * The @lr/proto schemas the document names in `components.schemas`. Wherever one of these very
 * objects appears (a route's body or answer, or inside another named schema) the document says
 * `$ref` instead: identity, so a copy that merely looks alike is never mistaken for it.
 */
const NAMED_SCHEMAS: Record<string, object> = {
  StaticRecord, StaticTombstone, StaticList, StaticCreated, StaticCreateBody, StaticBatchBody, StaticPatchBody,
  DynamicRecord, DynamicTombstone, DynamicList, DynamicCreated, DynamicCreateBody, DynamicBatchBody, DynamicPatchBody,
  RecordStatus: Status,
  AnalyticsSummary, CodeSummary, CodeBreakdown, DailyCount,
  ErrorBody, BatchErrorBody, BatchItemError, Deleted,
  WebhookCreateBody, WebhookEndpoint, WebhookCreated, WebhookList, WebhookAttempt, WebhookDeliveries,
}
const nameOf = new Map<object, string>(Object.entries(NAMED_SCHEMAS).map(([name, schema]) => [schema, name]))

/** Keys whose values are data (examples, defaults), where null means null. */
const DATA_KEYS = new Set(['example', 'examples', 'default', 'const', 'enum'])
/**
 * The 400 texts the schemas carry for decodeQuery and the body checks: not a JSON Schema keyword,
 * so linters (Redocly, Spectral) refused the document; served as an extension, which OpenAPI allows.
 */
const ERROR_MESSAGE = 'errorMessage'
const ERROR_MESSAGE_EXTENSION = 'x-error-message'
/**
 * A trimmed field (NOT_BLANK, with its length bounds after trimming) as the document says it: one
 * pattern holding the bounds of the trimmed text, and no `minLength`/`maxLength`, which would count
 * the padding too (a client refused `" " + 200 × "a" + " "`, which the API takes). JSON Schema
 * matches patterns on code points, as it counts lengths.
 */
function trimmedPattern(schema: Record<string, unknown>): Record<string, unknown> {
  const { minLength: _min, maxLength, ...rest } = schema
  const inner = typeof maxLength === 'number' ? `{0,${maxLength - 2}}` : '*'
  return { ...rest, pattern: `^\\s*\\S(?:[\\s\\S]${inner}\\S)?\\s*$` }
}
/** TypeBox writes `T.Record(T.String(), X)` as this pattern; JSON Schema says it as `additionalProperties`. */
const ANY_KEY = '^(.*)$'

/**
 * A JSON copy of part of the generated document: named schemas become `$ref`s, TypeBox's
 * symbols and any null or undefined left by the generator are dropped, data keys are copied as
 * they are. Never changes its input: the route details and the schemas are shared.
 */
function finish(value: unknown, self?: object): unknown {
  if (value === null || value === undefined || typeof value === 'function') return undefined
  if (Array.isArray(value)) return value.map((item) => finish(item)).filter((item) => item !== undefined)
  if (typeof value !== 'object') return value
  const name = nameOf.get(value)
  if (name && value !== self) return { $ref: `#/components/schemas/${name}` }
  const schema = (value as { pattern?: unknown }).pattern === NOT_BLANK ? trimmedPattern(value as Record<string, unknown>) : value
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(schema)) {
    if (DATA_KEYS.has(key)) out[key] = JSON.parse(JSON.stringify(child))
    else if (key === ERROR_MESSAGE) out[ERROR_MESSAGE_EXTENSION] = child
    else if (key === 'properties') out[key] = Object.fromEntries(Object.entries(child as object).map(([field, schema]) => [field, finish(schema)]))
    else if (key === 'patternProperties' && Object.keys(child as object).join() === ANY_KEY) out.additionalProperties = finish((child as Record<string, unknown>)[ANY_KEY])
    else {
      const copy = finish(child)
      if (copy !== undefined) out[key] = copy
    }
  }
  return out
}

/** What @elysiajs/swagger generates from the routes' `detail`: the part this module keeps. */
export interface GeneratedDocument {
  info: object
  paths: Record<string, unknown>
}

/**
 * The served document: OpenAPI 3.1 (its schemas are JSON Schema 2020-12, as TypeBox writes
 * them), the generated paths with named schemas referenced, and the shared components.
 */
export function finishDocument(generated: GeneratedDocument) {
  return {
    openapi: '3.1.0',
    info: finish(generated.info),
    servers: [{ url: '/', description: 'this server' }],
    tags,
    paths: finish(generated.paths),
    components: {
      schemas: Object.fromEntries(Object.entries(NAMED_SCHEMAS).map(([name, schema]) => [name, finish(schema, schema)])),
      parameters: finish(parameters),
      headers: finish(headers),
      responses: finish(responses),
      securitySchemes,
    },
  }
}
