import { Elysia } from 'elysia'

/** The single-create routes, and where the record they create lives. */
const CREATED_AT: Record<string, (record: Record<string, unknown>) => unknown> = {
  '/v1/qrcodes': (record) => record.qr_id,
  '/v1/dynqrcodes': (record) => record.code,
}

/**
 * `Location` of the new record on a 201 of a single create (docs/decisions.md §10), as a path
 * relative to this API so it stays right behind any proxy. A batch creates many records, one
 * Location cannot name them: the body lists them. A replayed create (same Idempotency-Key)
 * answers the same record, so the same Location.
 */
export const location = new Elysia({ name: 'location' }).onAfterHandle({ as: 'global' }, ({ request, responseValue, set }) => {
  if (request.method !== 'POST' || set.status !== 201) return
  const path = new URL(request.url).pathname
  const idOf = CREATED_AT[path]
  const created = (responseValue as { created?: Record<string, unknown>[] } | undefined)?.created
  if (!idOf || created?.length !== 1) return
  const id = idOf(created[0]!)
  if (typeof id === 'string') set.headers.location = `${path}/${encodeURIComponent(id)}`
})
