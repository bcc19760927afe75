import { AppError, NAME_MAX, STATUSES, STYLE_MAX_BYTES, type Status, URL_MAX } from '@lr/proto'

/**
 * Validation rules shared by static and dynamic records (api-contract.md §3).
 * Each check returns the clean value, or throws a FieldError whose message goes to the client.
 */

export class FieldError extends Error {}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function checkUrl(field: string, value: unknown): string {
  if (typeof value !== 'string') throw new FieldError(`${field} must be a string`)
  if (value.length > URL_MAX) throw new FieldError(`${field} must be at most ${URL_MAX} characters`)
  // Whitespace or control characters would be silently trimmed or escaped by URL parsing.
  if (/[\s\u0000-\u001f\u007f]/.test(value) || !URL.canParse(value))
    throw new FieldError(`${field} must be an absolute http or https URL`)
  const url = new URL(value)
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '')
    throw new FieldError(`${field} must be an absolute http or https URL with a host`)
  return value
}

export function checkName(value: unknown): string {
  if (typeof value !== 'string') throw new FieldError('name must be a string')
  const name = value.trim()
  if (name.length < 1 || name.length > NAME_MAX)
    throw new FieldError(`name must be 1 to ${NAME_MAX} characters after trimming`)
  return name
}

export function checkStyle(value: unknown): Record<string, unknown> {
  if (!isPlainObject(value)) throw new FieldError('style must be a JSON object')
  if (new TextEncoder().encode(JSON.stringify(value)).length > STYLE_MAX_BYTES)
    throw new FieldError(`style must be at most ${STYLE_MAX_BYTES} bytes as JSON`)
  return value
}

export function checkStatus(value: unknown): Status {
  if (typeof value !== 'string' || !(STATUSES as readonly string[]).includes(value))
    throw new FieldError('status must be "active" or "draft"')
  return value as Status
}

type Checks = Record<string, (value: unknown) => unknown>

/**
 * Checks a body against named field checks. `required` fields must be present; a field not in
 * `checks` is rejected by name; with `atLeastOne`, an empty object is rejected.
 */
export function checkFields<T>(body: unknown, checks: Checks, required: string[], opts: { atLeastOne?: boolean } = {}): T {
  if (!isPlainObject(body)) throw new FieldError('body must be a JSON object')
  for (const key of Object.keys(body)) {
    if (!(key in checks)) throw new FieldError(`unknown field "${key}"`)
  }
  for (const key of required) {
    if (body[key] === undefined || body[key] === null) throw new FieldError(`${key} is required`)
  }
  if (opts.atLeastOne && Object.keys(body).length === 0)
    throw new FieldError(`body must set at least one of: ${Object.keys(checks).join(', ')}`)
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(body)) out[key] = checks[key]!(value)
  return out as T
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
