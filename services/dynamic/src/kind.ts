import { errorFields, log } from '@lr/platform/log'
import type { RecordKind } from '@lr/library-records'
import { DYNAMIC_EXPORT_COLUMNS, DynamicBatchBody, DynamicCreateBody, DynamicPatchBody, type DynamicRecord, isIssuableCode, type ResolverEntry } from '@lr/proto'
import { drawCodes } from './codes'
import type { StoredDynamic } from './ports'

export const entryOf = (r: StoredDynamic, deleted = false): ResolverEntry =>
  ({ code: r.code, destination_url: r.destination_url, status: r.status, deleted })

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
    present: ({ code, ...rest }) => ({ code, short_url: `${shortBaseUrl}/${code}`, ...rest }),
    async changed(records, deleted) {
      // The write is done: a lost event only delays the resolvers until their cache refresh.
      await Promise.all(records.map((r) => announce?.(entryOf(r, deleted)))).catch((error) =>
        log().error({ codes: records.length, ...errorFields(error) }, 'could not announce a change'),
      )
    },
  }
}
