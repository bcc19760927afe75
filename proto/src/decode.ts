import { KindGuard, type Static, type TObject, type TSchema } from '@sinclair/typebox'
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import { AppError } from './errors'
import { withinLength, withoutLength, withoutStringLengths } from './string-length'

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>()

/**
 * The schema's compiled check, made once per schema object: bus payloads and scan events are
 * checked on every message, and the interpreted Value.Check costs several times more.
 */
export function checkOf<S extends TSchema>(schema: S): TypeCheck<S> {
  let check = compiled.get(schema)
  if (!check) compiled.set(schema, (check = TypeCompiler.Compile(schema)))
  return check as TypeCheck<S>
}

/** Checks a bus payload against its contract; services never trust that the caller did. */
export function decode<S extends TSchema>(schema: S, payload: unknown): Static<S> {
  const check = checkOf(schema)
  if (check.Check(payload)) return payload
  const first = check.Errors(payload).First()
  throw new AppError('bad_request', `malformed request${first ? ` at ${first.path || '/'}: ${first.message}` : ''}`)
}

/**
 * The 400 for a query parameter whose value its field refuses: the field's `errorMessage`
 * (queries.ts gives every field one), else the name and TypeBox's words.
 */
export function badQueryValue(schema: TObject, name: string): AppError {
  const field = schema.properties[name]
  const message: unknown = field?.errorMessage
  return new AppError('bad_request', typeof message === 'string' ? message : `query parameter "${name}" is invalid`)
}

const WHOLE = /^\d{1,15}$/

/**
 * One query value as its field's type: an integer only from plain digits, a boolean only from
 * exactly `true` or `false`; anything else (strings, unions of literals) as it came. Not
 * TypeBox's Value.Convert, which reads `1e2` as 100, `0x10` as 16, `1` as true and ` 5` as 5.
 */
function convert(field: TSchema, raw: string): unknown {
  if (field.type === 'integer') return WHOLE.test(raw) ? Number(raw) : raw
  if (field.type === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw
  return raw
}

/**
 * A repeatable field (an array schema, e.g. `tag`) takes every value given, one given once too;
 * any other field given more than once is a 400 rather than a silent pick of one value.
 */
function readValue(field: TSchema, name: string, raw: string | string[]): unknown {
  if (field.type === 'array') return (Array.isArray(raw) ? raw : [raw]).map((one) => convert(field.items as TSchema, one))
  if (Array.isArray(raw)) throw new AppError('bad_request', `query parameter "${name}" may be given only once`)
  return convert(field, raw)
}

const lengthless = new WeakMap<TSchema, TSchema>()
/** A schema's copy without string bounds, made once: they are checked in code points (string-length.ts). */
function lengthlessOf<S extends TSchema>(schema: S, copy: (schema: S) => S): S {
  let rest = lengthless.get(schema)
  if (!rest) lengthless.set(schema, (rest = copy(schema)))
  return rest as S
}

/** A query value: a string's bounds in code points, as the served document means them; the rest by TypeBox. */
function fits(field: TSchema, value: unknown): boolean {
  if (typeof value !== 'string' || !KindGuard.IsString(field) || (field.minLength === undefined && field.maxLength === undefined)) return Value.Check(field, value)
  return Value.Check(lengthlessOf(field, withoutLength), value) && withinLength(value, field)
}

/**
 * A query string (one string per name, all of a repeated name's, as the gateway forwards it) read by its @lr/proto query
 * schema: a name the schema does not list, or a value its field refuses, is a 400 with that
 * field's message. Defaults are not applied: an absent name stays absent.
 */
export function decodeQuery<S extends TObject>(schema: S, query: Record<string, string | string[]>): Static<S> {
  const decoded: Record<string, unknown> = {}
  for (const [name, raw] of Object.entries(query)) {
    if (!Object.hasOwn(schema.properties, name)) throw new AppError('bad_request', `unknown query parameter "${name}"`)
    const field = schema.properties[name]!
    const value = readValue(field, name, raw)
    if (!fits(field, value)) throw badQueryValue(schema, name)
    decoded[name] = value
  }
  // Whatever the fields cannot say alone (a required name missing); their lengths are checked.
  return decode(lengthlessOf(schema, withoutStringLengths), decoded) as Static<S>
}
