import { controlCharacterProblem, hasUrlWhitespace, hasUserinfo, STYLE_MAX_BYTES, URL_MAX } from '@lr/proto'
import { FieldError } from './fields'

/**
 * What a body's TypeBox schema cannot say about one field. `trim` cleans a string before the
 * schema counts its length; `check` runs after the schema passed, throws FieldError, and returns
 * the value to keep (a field's normal form, or the value as sent).
 */
export interface FieldRule {
  trim?: boolean
  check?: (field: string, value: unknown) => unknown
}
export type FieldRules = Record<string, FieldRule>

/**
 * An absolute http or https URL with a host and no user name or password, returned in its normal
 * form (`new URL(x).href`): what is stored, answered and redirected to (docs/decisions.md §3).
 * Its type and length as sent are the schema's; the normal form must fit URL_MAX as well.
 */
export function normaliseHttpUrl(field: string, value: unknown): string {
  const text = value as string
  const url = hasUrlWhitespace(text) ? null : URL.parse(text)
  if (!url) throw new FieldError(`${field} must be an absolute http or https URL`)
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '')
    throw new FieldError(`${field} must be an absolute http or https URL with a host`)
  if (hasUserinfo(text, url))
    throw new FieldError(`${field} must not carry a user name or password (user@host)`)
  if (url.href.length > URL_MAX)
    throw new FieldError(`${field} must be at most ${URL_MAX} characters once normalised; this one has ${url.href.length}`)
  return url.href
}

/** Style is stored and returned as it is, so its size as JSON is bounded. */
export function checkStyleSize(field: string, value: unknown): unknown {
  if (new TextEncoder().encode(JSON.stringify(value)).length > STYLE_MAX_BYTES)
    throw new FieldError(`${field} must be at most ${STYLE_MAX_BYTES} bytes as JSON`)
  return value
}

/** A name is text for people: no control characters (docs/decisions.md §3); kept as sent otherwise. */
export function checkName(field: string, value: unknown): unknown {
  const problem = controlCharacterProblem(field, value as string)
  if (problem) throw new FieldError(problem)
  return value
}

/** Tags are a set: lowercased, duplicates dropped, in ascending order (so a reordered PATCH changes nothing). */
export function normaliseTags(_field: string, value: unknown): string[] {
  return [...new Set((value as string[]).map((tag) => tag.toLowerCase()))].sort()
}

/** The rules of every record body (RecordBodyFields in @lr/proto), given the kind's URL field. */
export const recordRules = (urlField: string): FieldRules => ({
  [urlField]: { check: normaliseHttpUrl },
  name: { trim: true, check: checkName },
  style: { check: checkStyleSize },
  tags: { check: normaliseTags },
})

/**
 * Device rules (`redirect_rules`): each destination_url by normaliseHttpUrl, named by its place
 * (`redirect_rules[1].destination_url`); an OS named twice is refused, since the second rule
 * could never match. The schema has checked the shape, the OS names and the count.
 */
export function checkRedirectRules(field: string, value: unknown): unknown {
  const rules = value as { os: string; destination_url: string }[]
  const seen = new Set<string>()
  return rules.map((rule, i) => {
    if (seen.has(rule.os)) throw new FieldError(`${field}[${i}].os "${rule.os}" is already named by an earlier rule`)
    seen.add(rule.os)
    return { os: rule.os, destination_url: normaliseHttpUrl(`${field}[${i}].destination_url`, rule.destination_url) }
  })
}
