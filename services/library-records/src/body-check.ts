import { firstInJson, type JsonNode } from '@lr/platform/json-walk'
import { boundedStrings, withinLength, withoutStringLengths } from '@lr/proto'
import type { Static, TObject } from '@sinclair/typebox'
import { type TypeCheck, TypeCompiler, type ValueError, ValueErrorType } from '@sinclair/typebox/compiler'
import type { FieldRules } from './field-rules'
import { FieldError, isPlainObject } from './fields'
import { lengthMessage, messageOf } from './body-messages'

/** A compiled body check; `schema` is the very object it compiled (and the route documents). */
export interface BodyCheck<S extends TObject> {
  readonly schema: S
  /** The clean body (own keys of the schema only, trimmed and normalised where a rule says); throws FieldError. */
  (body: unknown): Static<S>
}

// Which problem a client hears about first when a body has several.
const RANK: Partial<Record<ValueErrorType, number>> = {
  [ValueErrorType.ObjectAdditionalProperties]: 1,
  [ValueErrorType.ObjectRequiredProperty]: 2,
  [ValueErrorType.ObjectMinProperties]: 3,
}

// Every service instance (and every test's) checks the same few schemas: compile each once,
// without the string bounds, which `check` applies in code points (withinLength).
const compiledOnce = new WeakMap<TObject, TypeCheck<TObject>>()
function compiled<S extends TObject>(schema: S): TypeCheck<S> {
  let check = compiledOnce.get(schema)
  if (!check) compiledOnce.set(schema, (check = TypeCompiler.Compile(withoutStringLengths(schema))))
  return check as TypeCheck<S>
}

/**
 * Compiles an object schema of @lr/proto into a body check. TypeBox decides shape, types,
 * required and unknown fields (own keys only, so `__proto__` or `constructor` are unknown fields
 * like any other); `rules` add what a schema cannot say. One FieldError names the first problem.
 */
export function compileBodyCheck<S extends TObject>(schema: S, rules: FieldRules = {}): BodyCheck<S> {
  const typeCheck = compiled(schema)
  const lengths = new Map(boundedStrings(schema))
  const check = (body: unknown): Static<S> => {
    if (!isPlainObject(body)) throw new FieldError('body must be a JSON object')
    // A spread copies own properties as data, `__proto__` included, and never touches a prototype.
    const input: Record<string, unknown> = { ...body }
    for (const [field, rule] of Object.entries(rules)) {
      if (rule.trim && Object.hasOwn(input, field) && typeof input[field] === 'string') input[field] = (input[field] as string).trim()
    }
    if (!typeCheck.Check(input)) throw new FieldError(firstProblem(schema, input, [...typeCheck.Errors(input)]))
    // Before the rules: a URL rule would percent-encode a lone surrogate as U+FFFD, unseen.
    const unkept = firstInJson(input, unkeptText)
    if (unkept) throw new FieldError(unkept.name ? `${unkept.place} has a member name that ${unkept.reason}` : `${unkept.place} ${unkept.reason}`)
    const clean: Record<string, unknown> = input
    for (const [field, value] of Object.entries(clean)) {
      const bounds = lengths.get(field)
      if (bounds && typeof value === 'string' && !withinLength(value, bounds)) throw new FieldError(lengthMessage(field, bounds, Boolean(rules[field]?.trim)))
      const normalise = rules[field]?.check
      if (normalise) clean[field] = normalise(field, value)
    }
    return clean as Static<S>
  }
  return Object.assign(check, { schema })
}

/**
 * Text no store can keep as sent, in any field (a style's member names too), so the answer would
 * differ from what was stored: a lone UTF-16 surrogate (UTF-8 cannot store it: U+FFFD in its
 * place) and U+0000 (the CSV export cannot carry it). Checked here, not by the gateway's parser,
 * so that a batch names the item like any other field rule (spec §4.4, §7).
 */
function unkeptText({ value }: JsonNode): string | undefined {
  if (typeof value !== 'string') return undefined
  if (!value.isWellFormed()) return 'holds a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair): text must be valid Unicode'
  if (value.includes('\u0000')) return 'holds U+0000 (NUL), which no field may contain'
  return undefined
}

function firstProblem(schema: TObject, input: Record<string, unknown>, errors: ValueError[]): string {
  const order = Object.keys(input)
  const rank = (e: ValueError) => RANK[e.type] ?? 10 + Math.max(0, order.indexOf(fieldOf(e)))
  const first = errors.sort((a, b) => rank(a) - rank(b))[0]!
  return messageOf(schema, first, placeOf(first))
}

const unescape = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~')
/** The top-level field a TypeBox error path points at (`/a~1b/0` -> `a/b`). */
const fieldOf = (error: ValueError) => unescape(error.path.split('/')[1] ?? '')
/** Where in the body a TypeBox error points, as a client writes it: `redirect_rules[1].os`. */
const placeOf = (error: ValueError) =>
  error.path.split('/').slice(1).map(unescape).reduce((place, segment, i) => (i === 0 ? segment : /^\d+$/.test(segment) ? `${place}[${segment}]` : `${place}.${segment}`), '')
