import { type Static, Type as T } from '@sinclair/typebox'
import { Principal } from './principal'
import { CODE_PATTERN } from './codes'
import { AnsweredUrl, BATCH_MAX, Epoch, RecordBodyFields, RecordUrl, Status, Tags, Style, tombstoneOf } from './library'

/** Subjects of services/dynamic (dynamic QR codes); queue group `dynamic`. */
export const DYNAMIC_SUBJECTS = {
  create: 'dynamic.v1.create',
  batch: 'dynamic.v1.batch',
  list: 'dynamic.v1.list',
  get: 'dynamic.v1.get',
  update: 'dynamic.v1.update',
  delete: 'dynamic.v1.delete',
  /** One page of the CSV export: {principal, cursor} -> ExportChunk. */
  export: 'dynamic.v1.export',
  /** The resolver's cache miss: ResolveRequest -> ResolverEntry, or null for a code never issued. */
  resolve: 'dynamic.v1.resolve',
  /** Analytics' directory: one page of the library's live codes, oldest first: CodesRequest -> CodesPage. */
  codes: 'dynamic.v1.codes',
  /** Analytics' directory: {principal, id} -> CodeStatus for a code of the library, soft-deleted included; not_found otherwise. */
  find: 'dynamic.v1.find',
  /** A team admin approves or rejects a code's pending change: UpdateRequest (body ReviewBody) -> DynamicRecord. */
  review: 'dynamic.v1.review',
  /** The webhooks worker: {code} -> the code's library id (soft-deleted included), or null when never issued. */
  library: 'dynamic.v1.library',
} as const
export const DYNAMIC_QUEUE = 'dynamic'

/**
 * Event: a code was created, changed or soft-deleted; payload its ResolverEntry. Published by the
 * dynamic service before it answers, to every resolver (subscribe without a queue group).
 */
export const dynamicChangedSubject = (code: string) => `dynamic.v1.changed.${code}`
/** Pattern matching every dynamicChangedSubject. */
export const DYNAMIC_CHANGED_ALL = 'dynamic.v1.changed.*'

export { CODE_PATTERN, isIssuableCode, ROUTE_WORDS } from './codes'


/** The operating systems a redirect rule can name (docs/decisions.md, "Reviewed edits and device rules"). */
export const REDIRECT_OSES = ['ios', 'android', 'windows', 'macos', 'linux'] as const
export type RedirectOs = (typeof REDIRECT_OSES)[number]
/** At most this many redirect rules per code. */
export const REDIRECT_RULES_MAX = 5
/** One device rule: a scan from this OS (read from its User-Agent) goes to this destination. */
export const RedirectRule = T.Object(
  {
    os: T.Union(REDIRECT_OSES.map((os) => T.Literal(os)), { description: 'ios (iPhone, iPad, iPod), android, windows, macos (Macintosh), linux (Linux or X11, not Android)' }),
    destination_url: RecordUrl,
  },
  { additionalProperties: false },
)
export type RedirectRule = Static<typeof RedirectRule>
export const RedirectRules = T.Array(RedirectRule, {
  maxItems: REDIRECT_RULES_MAX,
  description: `at most ${REDIRECT_RULES_MAX} rules, each OS at most once; the first rule matching the scan's OS wins, else destination_url. [] removes every rule`,
})
/**
 * A writer's edit of an active code in a team library, awaiting a team admin's review: the
 * destination, rules and fallback it would give the code, who asked and when. The code keeps its
 * approved ones until an admin approves it.
 */
export const PendingChange = T.Object({
  destination_url: AnsweredUrl(),
  redirect_rules: T.Array(RedirectRule),
  fallback_url: T.Optional(T.Union([AnsweredUrl(), T.Null()], { description: 'the fallback it would get; null: none. Absent only in a change asked for before the fallback was reviewed (approving it keeps the fallback)' })),
  requested_by: T.String({ description: 'the account of the writer who asked' }),
  requested_at: Epoch,
})
export type PendingChange = Static<typeof PendingChange>
/** Latest expires_at accepted: 9999-12-31T23:59:59Z; a milliseconds value is far beyond it and refused. */
export const EXPIRES_AT_MAX = 253_402_300_799
// Body messages (body-messages.ts reads `x-error`): TypeBox's own would not name the field's rule.
const EXPIRES_AT_ERROR = `expires_at must be epoch seconds: an integer from 0 to ${EXPIRES_AT_MAX}`
const MAX_SCANS_ERROR = `max_scans must be an integer from 1 to ${Number.MAX_SAFE_INTEGER}`
const ExpiresAt = (error?: string) => T.Integer({ minimum: 0, maximum: EXPIRES_AT_MAX, description: 'epoch seconds (UTC); from that second on the code is expired (README "Expiring and capped codes"). A time in the past is accepted: the code is expired at once', ...(error && { 'x-error': error }) })
const MaxScans = (error?: string) => T.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'counted scans (GET, not a bot) redirected to destination_url before the code is capped; bots and HEAD requests never count', ...(error && { 'x-error': error }) })
const FallbackUrl = () => T.String({ maxLength: 2048, description: 'where an expired or capped code redirects (same rules and normal form as destination_url); without it such a code answers 410. Accepted without expires_at or max_scans: it then waits for one' })
const nullable = (schema: ReturnType<typeof T.Integer> | ReturnType<typeof T.String>, error: string) =>
  T.Union([schema, T.Null()], { description: `${schema.description}; null clears it`, 'x-error': `${error}, or null to clear it` })

/** Expiry and cap of a dynamic code, as answered: present only when set. */
const ExpiryRecordFields = {
  expires_at: T.Optional(ExpiresAt()),
  max_scans: T.Optional(MaxScans()),
  fallback_url: T.Optional(AnsweredUrl('where the code redirects once expired or capped, in its normal form (as destination_url)')),
}
/** The same fields in a create body: each optional. */
const ExpiryCreateFields = {
  expires_at: T.Optional(ExpiresAt(EXPIRES_AT_ERROR)),
  max_scans: T.Optional(MaxScans(MAX_SCANS_ERROR)),
  fallback_url: T.Optional(FallbackUrl()),
}
/** The same fields in a PATCH body: null clears one. */
const ExpiryPatchFields = {
  expires_at: nullable(ExpiresAt(), EXPIRES_AT_ERROR),
  max_scans: nullable(MaxScans(), MAX_SCANS_ERROR),
  fallback_url: nullable(FallbackUrl(), 'fallback_url must be a string'),
}

/** A dynamic QR code record (docs/decisions.md §3). `short_url` is SHORT_BASE_URL/code. */
export const DynamicRecord = T.Object({
  code: T.String({ pattern: CODE_PATTERN.source }),
  short_url: T.String({ description: 'SHORT_BASE_URL, a slash and the code' }),
  destination_url: AnsweredUrl(),
  name: T.String({ minLength: 1, maxLength: 200 }),
  style: Style,
  tags: Tags,
  status: Status,
  team_id: T.Union([T.String(), T.Null()]),
  created_by: T.String(),
  created_at: Epoch,
  updated_at: Epoch,
  /** Absent when the code has none. */
  redirect_rules: T.Optional(T.Array(RedirectRule, { description: 'device rules, absent when none: the first matching the scan\'s OS wins, else destination_url' })),
  /** Absent when none awaits review. */
  pending_change: T.Optional({ ...PendingChange, description: 'a writer\'s edit of destination_url, redirect_rules or fallback_url awaiting a team admin (POST .../review); absent when none' }),
  ...ExpiryRecordFields,
})
export type DynamicRecord = Static<typeof DynamicRecord>

/** CSV columns of /dynqrcodes/export, in order (docs/decisions.md §7): services/dynamic writes them, the gateway documents them. */
export const DYNAMIC_EXPORT_COLUMNS = [
  'code', 'short_url', 'destination_url', 'name', 'status', 'team_id', 'created_by', 'style', 'created_at', 'updated_at',
  'tags',
] as const satisfies readonly (keyof DynamicRecord)[]

/**
 * Request bodies: the gateway documents them and services/dynamic validates with these same
 * schema objects (compiled by @lr/library-records), so the docs and the checks cannot drift.
 */
export const DynamicCreateBody = T.Object({
  destination_url: RecordUrl,
  ...RecordBodyFields,
  redirect_rules: T.Optional(RedirectRules),
  ...ExpiryCreateFields,
}, { additionalProperties: false })
const DynamicItems = T.Array(DynamicCreateBody, { minItems: 1, maxItems: BATCH_MAX })
/** A bare array, or `{"dynqrcodes": [...]}`. */
export const DynamicBatchBody = T.Union([DynamicItems, T.Object({ dynqrcodes: DynamicItems }, { additionalProperties: false })])
export const DynamicPatchBody = T.Partial(
  T.Object({
    destination_url: RecordUrl,
    ...RecordBodyFields,
    status: Status,
    redirect_rules: RedirectRules,
    ...ExpiryPatchFields,
  }),
  { additionalProperties: false, minProperties: 1 },
)
/** POST /v1/dynqrcodes/{code}/review: a team admin applies (`approve`) or drops (`reject`) the code's pending change. */
export const ReviewBody = T.Object(
  { decision: T.Union([T.Literal('approve'), T.Literal('reject')]) },
  { additionalProperties: false },
)
export type ReviewBody = Static<typeof ReviewBody>
export const DynamicTombstone = tombstoneOf('code', 'the deleted code')
/** A page: records, and with include_deleted=true the deleted ones' tombstones among them. */
export const DynamicList = T.Object({ dynqrcodes: T.Array(T.Union([DynamicRecord, DynamicTombstone])), next_cursor: T.Union([T.String(), T.Null()]) })

export const ResolveRequest = T.Object({ code: T.String({ maxLength: 64 }) })
export type ResolveRequest = Static<typeof ResolveRequest>

/** What a resolver needs to answer a scan of one code, whatever its library. */
export const ResolverEntry = T.Object({
  code: T.String(),
  destination_url: T.String(),
  status: Status,
  /** Soft-deleted: the resolver answers 410. */
  deleted: T.Boolean(),
  /** The approved device rules, absent when none. */
  redirect_rules: T.Optional(T.Array(RedirectRule)),
  /** Epoch seconds; from then on the code is expired (absent: never). */
  expires_at: T.Optional(T.Integer()),
  /** Counted scans before the code is capped (absent: no cap). */
  max_scans: T.Optional(T.Integer()),
  /** Where an expired or capped code redirects (absent: 410). */
  fallback_url: T.Optional(T.String()),
  /**
   * Counted scans of a capped code when it was looked up (analytics' exact total): only in a
   * `resolve` reply of a code with max_scans, never in a change event. The resolver's count starts there.
   */
  scans: T.Optional(T.Integer({ minimum: 0 })),
})
export type ResolverEntry = Static<typeof ResolverEntry>
export const ResolveReply = T.Union([ResolverEntry, T.Null()])
export type ResolveReply = Static<typeof ResolveReply>

/**
 * A page of a library's live codes; `cursor` null starts, a page's `next_cursor` continues.
 * `limit`: at most this many codes (the service's page size when larger or absent).
 */
export const CodesRequest = T.Object({ principal: Principal, cursor: T.Union([T.String(), T.Null()]), limit: T.Optional(T.Integer({ minimum: 1 })) })
export type CodesRequest = Static<typeof CodesRequest>
export const CodesPage = T.Object({ codes: T.Array(T.String()), next_cursor: T.Union([T.String(), T.Null()]) })
export type CodesPage = Static<typeof CodesPage>

/** A code of the principal's library and whether it is soft-deleted (its history is kept). */
export const CodeStatus = T.Object({ code: T.String(), deleted: T.Boolean() })
export type CodeStatus = Static<typeof CodeStatus>
