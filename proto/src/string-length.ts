import { KindGuard, type TObject, type TString } from '@sinclair/typebox'
import { NOT_BLANK } from './library'

/**
 * JSON Schema counts a string's length in characters (Unicode code points, RFC 8259), so a
 * 200-emoji name is 200 characters; TypeBox counts UTF-16 units (400). Whatever checks a
 * documented string bound leaves it out of TypeBox's check and applies it with this, so the
 * served document stays exact. Code points are counted only when the UTF-16 length (between 1
 * and 2 units each) leaves the bounds in doubt.
 */
export function withinLength(value: string, { minLength = 0, maxLength = Number.POSITIVE_INFINITY }: Pick<TString, 'minLength' | 'maxLength'>): boolean {
  if (value.length >= 2 * minLength && value.length <= maxLength) return true
  const characters = [...value].length
  return characters >= minLength && characters <= maxLength
}

/**
 * A string schema's copy without its length bounds (for TypeBox's check; see withinLength),
 * NOT_BLANK included: it is how the document says a trimmed field's minimum, which the checks
 * apply as a length after trimming.
 */
export function withoutLength(string: TString): TString {
  const { minLength: _min, maxLength: _max, ...rest } = string
  if (rest.pattern === NOT_BLANK) delete rest.pattern
  return rest as TString
}

/** The top-level string fields of `schema` that bound their length, by name. */
export const boundedStrings = (schema: TObject): [string, TString][] =>
  Object.entries(schema.properties).filter((entry): entry is [string, TString] => {
    const field = entry[1]
    return KindGuard.IsString(field) && (field.minLength !== undefined || field.maxLength !== undefined)
  })

/** An object schema's copy whose top-level strings have no length bounds (the schema itself when none has). */
export function withoutStringLengths<S extends TObject>(schema: S): S {
  const bounded = boundedStrings(schema)
  if (bounded.length === 0) return schema
  const properties = { ...schema.properties }
  for (const [field, string] of bounded) properties[field] = withoutLength(string)
  return { ...schema, properties }
}
