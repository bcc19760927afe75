import { type Static, Type as T } from '@sinclair/typebox'
import { CONTROL_CHARACTERS_RULE } from './names'

/**
 * What static and dynamic records share: one library-record lifecycle (docs/decisions.md,
 * "Records"). Limits of the fields every record carries.
 */
export const URL_MAX = 2048
export const NAME_MAX = 200
export const STYLE_MAX_BYTES = 8 * 1024

export const STATUSES = ['active', 'draft'] as const
/** `active`, or `draft` while a shared-library record awaits a team admin's approval. */
export const Status = T.Union([T.Literal('active'), T.Literal('draft')])
export type Status = Static<typeof Status>

/** Unix epoch seconds, UTC. */
export const Epoch = T.Integer({ minimum: 0 })
/** Styling data: any JSON object, stored and returned, never rendered. */
export const Style = T.Record(T.String(), T.Unknown())

/** Tags of one record (docs/decisions.md "Tags, search and sort"): at most TAGS_MAX, each TAG_PATTERN. */
export const TAGS_MAX = 10
export const TAG_MAX_LENGTH = 32
/** ASCII letters, digits, `-` and `_`; stored lowercased, so tags are case-insensitive. */
export const TAG_PATTERN = `^[A-Za-z0-9_-]{1,${TAG_MAX_LENGTH}}$`
export const TAG_RULE = `each tag must be 1 to ${TAG_MAX_LENGTH} characters of ASCII letters, digits, - or _`
/** A tag as sent (any case); the record stores and answers it lowercased. */
export const Tag = T.String({ pattern: TAG_PATTERN, errorMessage: TAG_RULE, examples: ['print'] })
/** Tags as answered: lowercased, without duplicates, in ascending order. */
export const Tags = T.Array(T.String({ pattern: `^[a-z0-9_-]{1,${TAG_MAX_LENGTH}}$` }), { maxItems: TAGS_MAX, uniqueItems: true })

/** Every bulk creation route accepts at most this many items per call. */
export const BATCH_MAX = 50

/** A string holding something besides whitespace: what the trimmed fields' `minLength: 1` means. */
export const NOT_BLANK = '\\S'

/**
 * The body fields every kind of record takes besides its URL, in the order error messages list
 * them. Adding a field here adds it to the create and PATCH bodies of both kinds, and to their
 * validation (the services compile these same schemas). Rules a schema cannot say (an http(s)
 * URL with a host, the name counted after trimming, style's size as JSON) live in
 * @lr/library-records beside the compiled check.
 */
export const RecordBodyFields = {
  name: T.String({
    minLength: 1,
    maxLength: NAME_MAX,
    // What the document can say of "after trimming": not blank. A client checking the schema then
    // refuses `"   "` as the API does (the length bounds are the trimmed name's, as README says).
    pattern: NOT_BLANK,
    description: `trimmed; 1 to ${NAME_MAX} characters after trimming, counted as Unicode code points (as JSON Schema counts a string's length): 200 emoji are 200 characters; ${CONTROL_CHARACTERS_RULE}`,
  }),
  style: T.Optional(T.Record(T.String(), T.Unknown(), { description: `any JSON object, at most ${STYLE_MAX_BYTES} bytes as JSON; no text in it (a value or a member name) may hold U+0000 or a lone UTF-16 surrogate, which no store keeps as sent (400 naming its place: \`style.k[1] holds U+0000 ...\`)` })),
  tags: T.Optional(T.Array(Tag, {
    maxItems: TAGS_MAX,
    errorMessage: `tags must be an array of at most ${TAGS_MAX} tags`,
    description: `at most ${TAGS_MAX} tags, ${TAG_RULE}; case-insensitive (stored and answered lowercased), duplicates removed, answered in ascending order. Default on create: []. A PATCH replaces the whole set`,
  })),
}
/**
 * A URL a record points to: an absolute http or https URL with a host and no user name or
 * password, stored and answered in its normal form (docs/decisions.md §3).
 */
export const RecordUrl = T.String({
  maxLength: URL_MAX,
  description: `absolute http or https URL with a host; no user name or password (\`https://user@host\` is refused); stored, answered and redirected to in its normal form (WHATWG URL serialisation, \`new URL(url).href\`: \`HTTPS://Example.com\` becomes \`https://example.com/\`), which must fit ${URL_MAX} characters too`,
})

/**
 * A URL as answered: its normal form (RecordUrl). Not `format: "uri"`: the WHATWG serialisation
 * keeps characters RFC 3986 leaves out (`https://shop.example/a|b?q={x}`), so a client checking
 * that format would refuse records the API stores and redirects to.
 */
export const AnsweredUrl = (description = 'absolute http or https URL in its normal form (WHATWG URL serialisation, `new URL(url).href`); may hold characters RFC 3986 leaves out, such as `|` or `{`') =>
  T.String({ maxLength: URL_MAX, description })

/** The answer of every create: `{"created": [record, ...]}` in the order sent. */
export const Created = <S extends ReturnType<typeof T.Object>>(record: S) => T.Object({ created: T.Array(record) })

/**
 * A deleted record in the list of changes (`include_deleted=true`): its id, when it was deleted,
 * and its last change (the deletion), nothing else (README "Keeping another system in sync").
 */
export const tombstoneOf = (idField: string, idDescription: string) =>
  T.Object(
    {
      [idField]: T.String({ description: idDescription }),
      deleted_at: T.Integer({ minimum: 0, description: 'epoch seconds of the deletion' }),
      updated_at: T.Integer({ minimum: 0, description: 'epoch seconds of its last change: the deletion' }),
    },
    { additionalProperties: false, description: 'a deleted record, in the list of changes only (include_deleted=true)' },
  )
