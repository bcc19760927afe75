import { type Static, Type as T } from '@sinclair/typebox'

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

/** The answer of every create: `{"created": [record, ...]}` in the order sent. */
export const Created = <S extends ReturnType<typeof T.Object>>(record: S) => T.Object({ created: T.Array(record) })
