import type { TSchema } from '@sinclair/typebox'

const json = (schema: TSchema) => ({ content: { 'application/json': { schema } } })
const ErrorBody = { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] } as unknown as TSchema

/**
 * OpenAPI `detail` of one route. Bodies are documented, not validated here: the owning service
 * validates (it must anyway), so the rules and messages live in one place.
 */
export function doc(tag: string, summary: string, opts: { body?: TSchema; ok?: TSchema; status?: number; csv?: boolean } = {}) {
  const status = String(opts.status ?? 200)
  return {
    tags: [tag],
    summary,
    security: [{ apiKey: [] }],
    ...(opts.body ? { requestBody: { required: true, ...json(opts.body) } } : {}),
    responses: {
      [status]: opts.csv
        ? { description: 'CSV (RFC 4180)', content: { 'text/csv': { schema: { type: 'string' } } } }
        : { description: 'Success', ...(opts.ok ? json(opts.ok) : {}) },
      '400': { description: 'Validation failed', ...json(ErrorBody) },
      '403': { description: 'Key missing, revoked, not yet active, or no API access', ...json(ErrorBody) },
      '404': { description: 'Not found in this key\'s library', ...json(ErrorBody) },
      '429': { description: 'Rate limit or daily quota exceeded', ...json(ErrorBody) },
    },
  } as Record<string, unknown>
}

/** The query string as the services expect it: one string per name. */
export const queryOf = (request: Request): Record<string, string> =>
  Object.fromEntries(new URL(request.url).searchParams)
