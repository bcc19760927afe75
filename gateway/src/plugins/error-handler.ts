import { Elysia } from 'elysia'
import { AppError, errorBody, JSON_CONTENT_TYPE } from '@lr/proto'
import { errorFields, log } from '@lr/platform/log'
import { mergeHeaders } from './set-headers'
import { requestUrlOf } from '@lr/platform/request-url'

/** Elysia wraps what a parser throws in a ParseError; the AppError is its cause. */
function asAppError(error: unknown, code: unknown, request: Request): AppError {
  if (error instanceof AppError) return error
  const cause = (error as { cause?: unknown })?.cause
  if (cause instanceof AppError) return cause
  if (code === 'NOT_FOUND') return new AppError('not_found', `no route ${request.method} ${requestUrlOf(request.url).pathname}`)
  if (code === 'PARSE') return new AppError('bad_request', 'request body could not be read')
  return new AppError('internal', 'internal error')
}

/**
 * Transport failures (the bus's 503 and 504) carry the subject for the logs; the client reads
 * what to do, not how the product is cut into services (docs/decisions.md §8).
 */
const CLIENT_MESSAGES: Partial<Record<AppError['code'], string>> = {
  unavailable: 'the service is temporarily unavailable, please retry shortly',
  timeout: 'the service did not answer in time, please retry shortly',
}

/** What a 503 or 504 told the operators (the client's message says less): for its request's line. */
const unavailableCauses = new WeakMap<Request, { code: AppError['code']; detail: string }>()

/**
 * The `code` and `detail` (which subject, why) of a request answered 503 or 504, for its access
 * log line (observe.ts): one line a failed request, not a second `service unavailable` line each.
 */
export const unavailableCauseOf = (request: Request) => unavailableCauses.get(request)

function forClient(error: AppError, request: Request): AppError {
  const message = CLIENT_MESSAGES[error.code]
  if (!message) return error
  unavailableCauses.set(request, { code: error.code, detail: error.message })
  return new AppError(error.code, message, { ...error.details, retryAfter: error.details?.retryAfter ?? 1 })
}

/** The single place that turns an error into the JSON error body and the table's status (docs/decisions.md §8). */
export const errorHandler = new Elysia({ name: 'error-handler' }).onError({ as: 'global' }, ({ error, code, request, set }) => {
  const appError = forClient(asAppError(error, code, request), request)
  if (appError.code === 'internal') log().error({ method: request.method, path: requestUrlOf(request.url).pathname, ...errorFields(error) }, 'request failed')
  return writeError(appError, set)
})

/** Status, headers and JSON body of one error answer; also for plugins that answer an error themselves. */
export function writeError(appError: AppError, set: { status?: unknown; headers: Record<string, unknown> }) {
  set.status = appError.status
  mergeHeaders(set.headers, appError.details?.headers ?? {})
  if (appError.details?.retryAfter) mergeHeaders(set.headers, { 'retry-after': String(appError.details.retryAfter) })
  set.headers['content-type'] = JSON_CONTENT_TYPE
  return errorBody(appError)
}
