import { STYLE_MAX_BYTES } from '@lr/proto'
import { FieldError } from './fields'

/**
 * What a body's TypeBox schema cannot say about one field. `trim` cleans a string before the
 * schema counts its length; `check` runs after the schema passed and throws FieldError.
 */
export interface FieldRule {
  trim?: boolean
  check?: (field: string, value: unknown) => void
}
export type FieldRules = Record<string, FieldRule>

/** An absolute http or https URL with a host (its type and length are the schema's). */
export function checkHttpUrl(field: string, value: unknown): void {
  const text = value as string
  // Whitespace or control characters would be silently trimmed or escaped by URL parsing.
  if (/[\s\u0000-\u001f\u007f]/.test(text) || !URL.canParse(text))
    throw new FieldError(`${field} must be an absolute http or https URL`)
  const url = new URL(text)
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '')
    throw new FieldError(`${field} must be an absolute http or https URL with a host`)
}

/** Style is stored and returned as it is, so its size as JSON is bounded. */
export function checkStyleSize(field: string, value: unknown): void {
  if (new TextEncoder().encode(JSON.stringify(value)).length > STYLE_MAX_BYTES)
    throw new FieldError(`${field} must be at most ${STYLE_MAX_BYTES} bytes as JSON`)
}

/** The rules of every record body (RecordBodyFields in @lr/proto), given the kind's URL field. */
export const recordRules = (urlField: string): FieldRules => ({
  [urlField]: { check: checkHttpUrl },
  name: { trim: true },
  style: { check: checkStyleSize },
})
