import type { Static, TObject } from '@sinclair/typebox'
import { type TypeCheck, TypeCompiler, type ValueError, ValueErrorType } from '@sinclair/typebox/compiler'
import type { FieldRules } from './field-rules'
import { FieldError, isPlainObject } from './fields'
import { messageOf } from './body-messages'

/** A compiled body check; `schema` is the very object it compiled (and the route documents). */
export interface BodyCheck<S extends TObject> {
  readonly schema: S
  /** The clean body (own keys of the schema only, trimmed where a rule says); throws FieldError. */
  (body: unknown): Static<S>
}

// Which problem a client hears about first when a body has several.
const RANK: Partial<Record<ValueErrorType, number>> = {
  [ValueErrorType.ObjectAdditionalProperties]: 1,
  [ValueErrorType.ObjectRequiredProperty]: 2,
  [ValueErrorType.ObjectMinProperties]: 3,
}

// Every service instance (and every test's) checks the same few schemas: compile each once.
const compiledOnce = new WeakMap<TObject, TypeCheck<TObject>>()
function compiled<S extends TObject>(schema: S): TypeCheck<S> {
  let check = compiledOnce.get(schema)
  if (!check) compiledOnce.set(schema, (check = TypeCompiler.Compile(schema)))
  return check as TypeCheck<S>
}

/**
 * Compiles an object schema of @lr/proto into a body check. TypeBox decides shape, types,
 * required and unknown fields (own keys only, so `__proto__` or `constructor` are unknown fields
 * like any other); `rules` add what a schema cannot say. One FieldError names the first problem.
 */
export function compileBodyCheck<S extends TObject>(schema: S, rules: FieldRules = {}): BodyCheck<S> {
  const typeCheck = compiled(schema)
  const check = (body: unknown): Static<S> => {
    if (!isPlainObject(body)) throw new FieldError('body must be a JSON object')
    // A spread copies own properties as data, `__proto__` included, and never touches a prototype.
    const input: Record<string, unknown> = { ...body }
    for (const [field, rule] of Object.entries(rules)) {
      if (rule.trim && Object.hasOwn(input, field) && typeof input[field] === 'string') input[field] = (input[field] as string).trim()
    }
    if (!typeCheck.Check(input)) throw new FieldError(firstProblem(schema, rules, input, [...typeCheck.Errors(input)]))
    for (const [field, value] of Object.entries(input)) rules[field]?.check?.(field, value)
    return input as Static<S>
  }
  return Object.assign(check, { schema })
}

function firstProblem(schema: TObject, rules: FieldRules, input: Record<string, unknown>, errors: ValueError[]): string {
  const order = Object.keys(input)
  const rank = (e: ValueError) => RANK[e.type] ?? 10 + Math.max(0, order.indexOf(fieldOf(e)))
  const first = errors.sort((a, b) => rank(a) - rank(b))[0]!
  const field = fieldOf(first)
  return messageOf(schema, first, field, Object.hasOwn(rules, field) && Boolean(rules[field]!.trim))
}

/** The top-level field a TypeBox error path points at (`/a~1b/0` -> `a/b`). */
const fieldOf = (error: ValueError) => (error.path.split('/')[1] ?? '').replace(/~1/g, '/').replace(/~0/g, '~')
