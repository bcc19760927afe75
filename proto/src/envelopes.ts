import { type Static, Type as T } from '@sinclair/typebox'
import { Principal } from './principal'
import { ListQuery } from './paging'

/** Envelopes the gateway sends; services re-validate them. */
export const WithPrincipal = T.Object({ principal: Principal })
/** A create; `idempotency_key` is the client's Idempotency-Key header, when sent. */
export const BodyRequest = T.Object({ principal: Principal, body: T.Unknown(), idempotency_key: T.Optional(T.String()) })
/**
 * `known`: sent by a gateway that keeps list pages, the tag of the one it holds for this library
 * and query, or null. A request with it is answered as @lr/platform/kept-list says (the page and
 * its tag, or unchanged); one without it with the page alone.
 */
export const ListRequest = T.Object({ principal: Principal, query: ListQuery, known: T.Optional(T.Union([T.String({ maxLength: 64 }), T.Null()])) })
/** `if_match`: the client's If-Match header, forwarded on PATCH and DELETE (a stale tag is 412). */
export const IdRequest = T.Object({ principal: Principal, id: T.String(), if_match: T.Optional(T.String()) })
export const UpdateRequest = T.Object({ principal: Principal, id: T.String(), body: T.Unknown(), if_match: T.Optional(T.String()) })
/** POST .../review: an update that also takes the client's Idempotency-Key, when sent. */
export const ReviewRequest = T.Object({ ...UpdateRequest.properties, idempotency_key: T.Optional(T.String()) })
export const ExportRequest = T.Object({ principal: Principal, cursor: T.Union([T.String(), T.Null()]) })
export type ExportRequest = Static<typeof ExportRequest>

/** One piece of a streamed CSV export: text to append, and where to continue (null: done). */
export const ExportChunk = T.Object({ csv: T.String(), next_cursor: T.Union([T.String(), T.Null()]) })
export type ExportChunk = Static<typeof ExportChunk>
