import { errorFields, log } from '@lr/platform/log'
import { checkRedirectRules, type RecordKind } from '@lr/library-records'
import { DYNAMIC_EXPORT_COLUMNS, DynamicBatchBody, DynamicCreateBody, DynamicPatchBody, type DynamicRecord, isIssuableCode, type ResolverEntry } from '@lr/proto'
import { drawCodes } from './codes'
import type { StoredDynamic } from './ports'

export const entryOf = (r: StoredDynamic, deleted = false): ResolverEntry =>
  ({ code: r.code, destination_url: r.destination_url, status: r.status, deleted, ...rulesOf(r) })

/** The approved device rules of a record, as a ResolverEntry carries them: absent when none. */
export const rulesOf = (r: Pick<StoredDynamic, 'redirect_rules'>) => (r.redirect_rules?.length ? { redirect_rules: r.redirect_rules } : {})

/** The record as answered: short_url added; redirect_rules absent when empty, pending_change when none. */
function presented(shortBaseUrl: string, { code, redirect_rules, pending_change, ...rest }: StoredDynamic): DynamicRecord {
  return { code, short_url: `${shortBaseUrl}/${code}`, ...rest, ...rulesOf({ redirect_rules }), ...(pending_change ? { pending_change } : {}) }
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
    exportColumns: DYNAMIC_EXPORT_COLUMNS,
    newIds: (count) => drawCodes(newCode, count),
    isPossibleId: isIssuableCode,
    present: (record) => presented(shortBaseUrl, record),
    fieldRules: { redirect_rules: { check: checkRedirectRules } },
    reviewed: ['destination_url', 'redirect_rules'],
    async changed(records, deleted) {
      // The write is done: a lost event only delays the resolvers until their cache refresh.
      await Promise.all(records.map((r) => announce?.(entryOf(r, deleted)))).catch((error) =>
        log().error({ codes: records.length, ...errorFields(error) }, 'could not announce a change'),
      )
    },
  }
}
