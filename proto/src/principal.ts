import { type Static, Type as T } from '@sinclair/typebox'

/** Who a verified key acts for. Sent by the gateway with every service request. */
export const Principal = T.Object({
  account_id: T.String({ minLength: 1 }),
  key_id: T.String({ minLength: 1 }),
  scope: T.Union([T.Literal('personal'), T.Literal('business')]),
  /** The shared library of a business key; null for a personal key. */
  team_id: T.Union([T.String({ minLength: 1 }), T.Null()]),
  /** `owner` for a personal key; the member's team role for a business key. */
  role: T.Union([T.Literal('owner'), T.Literal('admin'), T.Literal('writer')]),
})
export type Principal = Static<typeof Principal>

/** The library a principal acts on; records are stored under this id. */
export function libraryOf(principal: Principal): string {
  return principal.team_id ? `team:${principal.team_id}` : `acct:${principal.account_id}`
}
