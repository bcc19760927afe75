import { Elysia } from 'elysia'
import { AppError, errorBody } from '@lr/proto'
import { errorFields, log } from '@lr/platform/log'
import { mergeHeaders } from './set-headers'

/** Elysia wraps what a parser throws in a ParseError; the AppError is its cause. */
function asAppError(error: unknown, code: unknown, request: Request): AppError {
  if (error instanceof AppError) return error
  const cause = (error as { cause?: unknown })?.cause
  if (cause instanceof AppError) return cause
  if (code === 'NOT_FOUND') return new AppError('not_found', `no route ${request.method} ${new URL(request.url).pathname}`)
  if (code === 'PARSE') return new AppError('bad_request', 'request body could not be read')
  return new AppError('internal', 'internal error')
}

/** The single place that turns an error into the spec's JSON body and the table's status. */
export const errorHandler = new Elysia({ name: 'error-handler' }).onError({ as: 'global' }, ({ error, code, request, set }) => {
  const appError = asAppError(error, code, request)
  if (appError.code === 'internal') log().error({ method: request.method, path: new URL(request.url).pathname, ...errorFields(error) }, 'request failed')
  set.status = appError.status
  mergeHeaders(set.headers, appError.details?.headers ?? {})
  if (appError.details?.retryAfter) mergeHeaders(set.headers, { 'retry-after': String(appError.details.retryAfter) })
  set.headers['content-type'] = 'application/json; charset=utf-8'
  return errorBody(appError)
})
