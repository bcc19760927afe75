import { errorFields, log } from '@lr/platform/log'
import { type FieldRules, normaliseHttpUrl, type RecordKind } from '@lr/library-records'
import { DYNAMIC_EXPORT_COLUMNS, DynamicBatchBody, DynamicCreateBody, DynamicPatchBody, type DynamicRecord, isIssuableCode, type ResolverEntry } from '@lr/proto'
import { drawCodes } from './codes'
import type { StoredDynamic } from './ports'

export const entryOf = (r: StoredDynamic, deleted = false): ResolverEntry =>
  ({ code: r.code, destination_url: r.destination_url, status: r.status, deleted, ...limitsOf(r) })

/** The expiry fields a ResolverEntry carries: only those set (null and absent alike are none). */
export function limitsOf(r: { expires_at?: number | null; max_scans?: number | null; fallback_url?: string | null }): Pick<ResolverEntry, 'expires_at' | 'max_scans' | 'fallback_url'> {
  const limits: Pick<ResolverEntry, 'expires_at' | 'max_scans' | 'fallback_url'> = {}
  if (r.expires_at != null) limits.expires_at = r.expires_at
  if (r.max_scans != null) limits.max_scans = r.max_scans
  if (r.fallback_url != null) limits.fallback_url = r.fallback_url
  return limits
}

/** fallback_url has destination_url's rules; null (a PATCH clearing it) stays null. */
const EXPIRY_RULES: FieldRules = {
  fallback_url: { check: (field, value) => (value === null ? null : normaliseHttpUrl(field, value)) },
}

export interface DynamicKindDeps {
  /** SHORT_BASE_URL, without a trailing slash: short_url = shortBaseUrl/code. */
  shortBaseUrl: string
  /** Draws one candidate code. */
  newCode: () => string
  /** Tells every resolver that a code was created, changed or deleted; awaited before answering. */
  announce?: (entry: ResolverEntry) => Promise<void>
}

/** Dynamic QR codes as a kind of library record: issued codes, short URLs, change events. */
export function dynamicKind({ shortBaseUrl, newCode, announce }: DynamicKindDeps): RecordKind<StoredDynamic, DynamicRecord, 'dynqrcodes'> {
  return {
    name: 'dynamic',
    noun: 'dynamic QR code',
    idField: 'code',
    urlField: 'destination_url',
    listKey: 'dynqrcodes',
    statusFilter: true,
    bodies: { create: DynamicCreateBody, batch: DynamicBatchBody, patch: DynamicPatchBody },
    rules: EXPIRY_RULES,
    exportColumns: DYNAMIC_EXPORT_COLUMNS,
    newIds: (count) => drawCodes(newCode, count),
    isPossibleId: isIssuableCode,
    // The expiry fields are answered only when set (docs/decisions.md "Expiring and capped codes").
    present: ({ code, expires_at, max_scans, fallback_url, ...rest }) =>
      ({ code, short_url: `${shortBaseUrl}/${code}`, ...rest, ...limitsOf({ expires_at, max_scans, fallback_url }) }),
    async changed(records, deleted) {
      // The write is done: a lost event only delays the resolvers until their cache refresh.
      await Promise.all(records.map((r) => announce?.(entryOf(r, deleted)))).catch((error) =>
        log().error({ codes: records.length, ...errorFields(error) }, 'could not announce a change'),
      )
    },
  }
}
