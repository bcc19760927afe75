import type { TObject, TSchema } from '@sinclair/typebox'
import { type ValueError, ValueErrorType } from '@sinclair/typebox/compiler'

const OBJECT_ERRORS = new Set([ValueErrorType.Object, ValueErrorType.ObjectAdditionalProperties, ValueErrorType.ObjectRequiredProperty, ValueErrorType.ObjectMinProperties])

/**
 * The client's words for one TypeBox error of a body checked against `schema`. String lengths
 * are not among them: body-check.ts compiles the schema without them and counts them itself.
 */
export function messageOf(schema: TObject, error: ValueError, field: string): string {
  const failing = error.schema as TSchema
  // A field may name its own rule (`x-error` on its schema, e.g. a nullable integer).
  const own = (schema.properties[field] as TSchema | undefined)?.['x-error']
  if (typeof own === 'string' && !OBJECT_ERRORS.has(error.type)) return own
  // A schema that words its own refusal (the tags and each tag, @lr/proto library.ts).
  if (typeof failing.errorMessage === 'string' && field !== '') return failing.errorMessage
  switch (error.type) {
    case ValueErrorType.Object:
      return field === '' ? 'body must be a JSON object' : `${field} must be a JSON object`
    case ValueErrorType.ObjectAdditionalProperties:
      return `unknown field ${JSON.stringify(field)}`
    case ValueErrorType.ObjectRequiredProperty:
      return `${field} is required`
    case ValueErrorType.ObjectMinProperties:
      return `body must set at least one of: ${Object.keys(schema.properties).join(', ')}`
    case ValueErrorType.String:
      // A required field sent as null is as good as missing.
      return error.value === null && schema.required?.includes(field) ? `${field} is required` : `${field} must be a string`
    case ValueErrorType.Array:
      return `${field} must be a JSON array`
    case ValueErrorType.ArrayMaxItems:
      return `${field} must hold at most ${failing.maxItems} items`
    case ValueErrorType.ArrayMinItems:
      return `${field} must hold at least ${failing.minItems} ${failing.minItems === 1 ? 'item' : 'items'}`
    case ValueErrorType.ArrayUniqueItems:
      return `${field} must not name an item twice`
    // Nested strings only (a rule's destination_url): top-level bounds are counted by body-check.ts.
    case ValueErrorType.StringMaxLength:
      return `${field} must be at most ${failing.maxLength} characters`
    case ValueErrorType.Union: {
      const literals = (failing.anyOf as TSchema[]).map((option) => JSON.stringify(option.const))
      return `${field} must be ${literals.join(' or ')}`
    }
    default:
      return `${field}: ${error.message}`
  }
}

/** A string field outside its bounds; lengths are in characters (code points), see body-check.ts. */
export function lengthMessage(field: string, bounds: { minLength?: number; maxLength?: number }, trimmed: boolean): string {
  if (bounds.minLength === undefined) return `${field} must be at most ${bounds.maxLength} characters`
  if (bounds.maxLength === undefined) return `${field} must be at least ${bounds.minLength} characters${trimmed ? ' after trimming' : ''}`
  return `${field} must be ${bounds.minLength} to ${bounds.maxLength} characters${trimmed ? ' after trimming' : ''}`
}
