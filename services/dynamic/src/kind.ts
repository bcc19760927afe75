import { errorFields, log } from '@lr/platform/log'
import { checkRedirectRules, type FieldRules, normaliseHttpUrl, type RecordKind } from '@lr/library-records'
import { DYNAMIC_EXPORT_COLUMNS, DynamicBatchBody, DynamicCreateBody, DynamicPatchBody, type DynamicRecord, isIssuableCode, type ResolverEntry } from '@lr/proto'
import { drawCodes } from './codes'
import type { StoredDynamic } from './ports'

export const entryOf = (r: StoredDynamic, deleted = false): ResolverEntry =>
  ({ code: r.code, destination_url: r.destination_url, status: r.status, deleted, ...rulesOf(r), ...limitsOf(r) })

/** The approved device rules of a record, as a ResolverEntry carries them: absent when none. */
export const rulesOf = (r: Pick<StoredDynamic, 'redirect_rules'>) => (r.redirect_rules?.length ? { redirect_rules: r.redirect_rules } : {})

type Limits = Pick<ResolverEntry, 'expires_at' | 'max_scans' | 'fallback_url'>

/** Sets on `target` the expiry fields of `r` that are set (null and absent alike are none). */
function addLimits<T extends Limits>(target: T, r: { expires_at?: number | null; max_scans?: number | null; fallback_url?: string | null }): T {
  if (r.expires_at != null) target.expires_at = r.expires_at
  if (r.max_scans != null) target.max_scans = r.max_scans
  if (r.fallback_url != null) target.fallback_url = r.fallback_url
  return target
}

/** The expiry fields a ResolverEntry carries: only those set. */
export const limitsOf = (r: Parameters<typeof addLimits>[1]): Limits => addLimits({}, r)

/** The kind's own fields: presented after the shared ones, and only when set. */
const OWN_FIELDS = new Set(['code', 'redirect_rules', 'pending_change', 'expires_at', 'max_scans', 'fallback_url'])

/**
 * The record as answered: short_url added; the kind's own fields only when set (redirect_rules
 * absent when empty, pending_change when none, the expiry fields when not set). Built key by key
 * in the stored order: a list page presents 100 records, and rest/spread copies of each were
 * 10 % of the list's profile (issue 14).
 */
function presented(shortBaseUrl: string, stored: StoredDynamic): DynamicRecord {
  const record: Record<string, unknown> = { code: stored.code, short_url: `${shortBaseUrl}/${stored.code}` }
  for (const key in stored) if (!OWN_FIELDS.has(key)) record[key] = stored[key as keyof StoredDynamic]
  if (stored.redirect_rules?.length) record.redirect_rules = stored.redirect_rules
  if (stored.pending_change) record.pending_change = stored.pending_change
  return addLimits(record as Limits, stored) as unknown as DynamicRecord
}

/** The kind's own body rules: device rules' URLs as destination_url's; fallback_url too (null, a PATCH clearing it, stays null). */
const DYNAMIC_RULES: FieldRules = {
  redirect_rules: { check: checkRedirectRules },
  fallback_url: { check: (field, value) => (value === null ? null : normaliseHttpUrl(field, value)) },
}

export interface DynamicKindDeps {
  /** SHORT_BASE_URL, without a trailing slash: short_url = shortBaseUrl/code. */
  shortBaseUrl: string
  /** Draws one candidate code. */
  newCode: () => string
  /**
   * Tells every resolver that a code was created, changed or deleted; awaited before answering.
   * `settled` (a change or a delete): resolve once the resolvers of this process have it, so the
   * very next scan obeys it (Bus.publish). A new code needs no wait: no resolver holds it yet.
   */
  announce?: (entry: ResolverEntry, settled: boolean) => Promise<void>
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
    fieldRules: DYNAMIC_RULES,
    exportColumns: DYNAMIC_EXPORT_COLUMNS,
    newIds: (count) => drawCodes(newCode, count),
    isPossibleId: isIssuableCode,
    present: (record) => presented(shortBaseUrl, record),
    exportCells: { short_url: { prefix: `${shortBaseUrl}/`, field: 'code' } },
    // Every field that decides where a scan goes: fallback_url too, or a writer could send the
    // scans of an approved code anywhere by setting it and an expiry in the past.
    reviewed: { destination_url: null, redirect_rules: [], fallback_url: null },
    async changed(records, type) {
      // The write is done: a lost event only delays the resolvers until their cache refresh.
      await Promise.all(records.map((r) => announce?.(entryOf(r, type === 'record.deleted'), type !== 'record.created'))).catch((error) =>
        log().error({ codes: records.length, ...errorFields(error) }, 'could not announce a change'),
      )
    },
  }
}
