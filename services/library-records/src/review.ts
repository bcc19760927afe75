import { AppError, type Principal, type Status } from '@lr/proto'

/** Who owns a new record, static or dynamic (docs/decisions.md §3). */
export interface Ownership {
  /** `active` in a personal library; `draft` in a shared library (it enters the review). */
  status: Status
  /** The shared library's team; null in a personal library. */
  team_id: string | null
  /** The account behind the key. */
  created_by: string
}

export function ownershipOf(principal: Principal): Ownership {
  return {
    status: principal.team_id ? 'draft' : 'active',
    team_id: principal.team_id,
    created_by: principal.account_id,
  }
}

export const APPROVAL_FORBIDDEN = 'only a team admin can approve a draft (draft -> active); this key belongs to a writer'

/**
 * The review rule of docs/decisions.md §4 for a status change of either kind of record: in a shared
 * library, draft -> active is the approval and only a team admin's key may make it (else 403).
 * Every other change, and any change in a personal library, is allowed.
 */
export function checkStatusChange(principal: Principal, from: Status, to: Status): void {
  if (principal.team_id && from === 'draft' && to === 'active' && principal.role !== 'admin')
    throw new AppError('forbidden', APPROVAL_FORBIDDEN)
}
