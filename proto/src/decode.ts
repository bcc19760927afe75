import type { TSchema, Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { AppError } from './errors'

/** Checks a bus payload against its contract; services never trust that the caller did. */
export function decode<S extends TSchema>(schema: S, payload: unknown): Static<S> {
  if (Value.Check(schema, payload)) return payload
  const first = Value.Errors(schema, payload).First()
  throw new AppError('bad_request', `malformed request${first ? ` at ${first.path || '/'}: ${first.message}` : ''}`)
}
