import { AppError } from '@lr/proto'

/** A rejected body or batch item; its message goes to the client as it is. */
export class FieldError extends Error {}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Runs the checks of one (non-batch) body; a FieldError becomes a 400 AppError with its message. */
export function orBadRequest<T>(check: () => T): T {
  try {
    return check()
  } catch (error) {
    if (error instanceof FieldError) throw new AppError('bad_request', error.message)
    throw error
  }
}
