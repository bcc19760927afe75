import { type Static, Type as T } from '@sinclair/typebox'
import { Principal } from './principal'
import { BATCH_MAX, Epoch, RecordBodyFields, RecordUrl, Status, Style } from './library'

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

/** Shape of a code: what the service issues and the only thing the resolver and routes look up. */
export const CODE_PATTERN = /^[0-9A-Za-z]{7,32}$/
/**
 * Words a code must never equal (docs/decisions.md §3): route segments under /dynqrcodes, and the
 * resolver's own paths (/metrics; /healthz for symmetry with the API port).
 */
export const ROUTE_WORDS: readonly string[] = ['analytics', 'export', 'batch', 'metrics', 'healthz']

/** True when `code` could have been issued: the right shape and not a route word (any case). */
export const isIssuableCode = (code: string) => CODE_PATTERN.test(code) && !ROUTE_WORDS.includes(code.toLowerCase())


/** A dynamic QR code record (docs/decisions.md §3). `short_url` is SHORT_BASE_URL/code. */
export const DynamicRecord = T.Object({
  code: T.String({ pattern: CODE_PATTERN.source }),
  short_url: T.String({ format: 'uri' }),
  destination_url: T.String({ format: 'uri', maxLength: 2048 }),
  name: T.String({ minLength: 1, maxLength: 200 }),
  style: Style,
  status: Status,
  team_id: T.Union([T.String(), T.Null()]),
  created_by: T.String(),
  created_at: Epoch,
  updated_at: Epoch,
})
export type DynamicRecord = Static<typeof DynamicRecord>

/** CSV columns of /dynqrcodes/export, in order (docs/decisions.md §7): services/dynamic writes them, the gateway documents them. */
export const DYNAMIC_EXPORT_COLUMNS = [
  'code', 'short_url', 'destination_url', 'name', 'status', 'team_id', 'created_by', 'style', 'created_at', 'updated_at',
] as const satisfies readonly (keyof DynamicRecord)[]

/**
 * Request bodies: the gateway documents them and services/dynamic validates with these same
 * schema objects (compiled by @lr/library-records), so the docs and the checks cannot drift.
 */
export const DynamicCreateBody = T.Object({ destination_url: RecordUrl, ...RecordBodyFields }, { additionalProperties: false })
const DynamicItems = T.Array(DynamicCreateBody, { minItems: 1, maxItems: BATCH_MAX })
/** A bare array, or `{"dynqrcodes": [...]}`. */
export const DynamicBatchBody = T.Union([DynamicItems, T.Object({ dynqrcodes: DynamicItems }, { additionalProperties: false })])
export const DynamicPatchBody = T.Partial(
  T.Object({ destination_url: RecordUrl, ...RecordBodyFields, status: Status }),
  { additionalProperties: false, minProperties: 1 },
)
export const DynamicList = T.Object({ dynqrcodes: T.Array(DynamicRecord), next_cursor: T.Union([T.String(), T.Null()]) })

export const ResolveRequest = T.Object({ code: T.String({ maxLength: 64 }) })
export type ResolveRequest = Static<typeof ResolveRequest>

/** What a resolver needs to answer a scan of one code, whatever its library. */
export const ResolverEntry = T.Object({
  code: T.String(),
  destination_url: T.String(),
  status: Status,
  /** Soft-deleted: the resolver answers 410. */
  deleted: T.Boolean(),
})
export type ResolverEntry = Static<typeof ResolverEntry>
export const ResolveReply = T.Union([ResolverEntry, T.Null()])
export type ResolveReply = Static<typeof ResolveReply>

/** A page of a library's live codes; `cursor` null starts, a page's `next_cursor` continues. */
export const CodesRequest = T.Object({ principal: Principal, cursor: T.Union([T.String(), T.Null()]) })
export type CodesRequest = Static<typeof CodesRequest>
export const CodesPage = T.Object({ codes: T.Array(T.String()), next_cursor: T.Union([T.String(), T.Null()]) })
export type CodesPage = Static<typeof CodesPage>

/** A code of the principal's library and whether it is soft-deleted (its history is kept). */
export const CodeStatus = T.Object({ code: T.String(), deleted: T.Boolean() })
export type CodeStatus = Static<typeof CodeStatus>
