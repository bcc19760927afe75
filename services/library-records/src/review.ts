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

/** A pending change as stored: the reviewed fields' proposed values, who asked and when. */
export type Pending = Record<string, unknown> & { requested_by: string; requested_at: number }

export const REVIEW_PERSONAL = 'a personal library has no reviews: its edits apply at once'
export const REVIEW_FORBIDDEN = 'only a team admin can review a pending change; this key belongs to a writer'
export const NOTHING_PENDING = 'this code has no pending change to review'

type Fields = Record<string, unknown>
/** The reviewed fields, each with its value when a record lacks it (RecordKind.reviewed). */
type Reviewed = Readonly<Record<string, unknown>>
// The reviewed fields' values: from the first source that has the field, else its empty value.
const valuesOf = (reviewed: Reviewed, ...sources: Fields[]) =>
  Object.fromEntries(Object.entries(reviewed).map(([field, empty]) => [field, sources.find((s) => s[field] !== undefined)?.[field] ?? empty]))
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/**
 * The review rule of a PATCH (docs/decisions.md, "Reviewed edits"): what it writes, given
 * `changes` (the fields that differ) and the record as read. A writer's edit of a `reviewed`
 * field of an active record in a team library (staying active) becomes `pending_change`, built
 * on the approved record, replacing any earlier one (the new writer is the requester); one that
 * comes back to the approved values withdraws it. An admin's edit of a reviewed field, like any
 * edit of a personal library or a draft, applies at once, and drops a pending change; a move to
 * draft drops it too. Edits of other fields apply at once and keep it.
 */
export function reviewedChanges(principal: Principal, reviewed: Reviewed | undefined, current: Fields, patch: Fields, changes: Fields, now: number): Fields {
  if (!reviewed) return changes
  const pending = (current.pending_change ?? null) as Pending | null
  const proposes = Object.keys(reviewed).some((field) => patch[field] !== undefined)
  const staysActive = (patch.status ?? current.status) === 'active'
  const writerOfActive = principal.team_id !== null && principal.role !== 'admin' && current.status === 'active' && staysActive
  if (!writerOfActive || !proposes) return pending && (!staysActive || proposes) ? { ...changes, pending_change: null } : changes
  const applied = Object.fromEntries(Object.entries(changes).filter(([field]) => !(field in reviewed)))
  const proposal = valuesOf(reviewed, patch, current)
  if (same(proposal, valuesOf(reviewed, current))) return pending ? { ...applied, pending_change: null } : applied
  if (pending && pending.requested_by === principal.account_id && same(proposal, valuesOf(reviewed, pending))) return applied
  return { ...applied, pending_change: { ...proposal, requested_by: principal.account_id, requested_at: now } }
}

/**
 * What POST .../review writes: `approve` applies the pending change's fields, `reject` drops it.
 * Only a team admin reviews (403 for a writer; 409 in a personal library); a record without a
 * pending change is a 409.
 */
export function checkReviewer(principal: Principal): void {
  if (!principal.team_id) throw new AppError('conflict', REVIEW_PERSONAL)
  if (principal.role !== 'admin') throw new AppError('forbidden', REVIEW_FORBIDDEN)
}

export function reviewDecision(reviewed: Reviewed, current: Fields, decision: 'approve' | 'reject'): Fields {
  const pending = (current.pending_change ?? null) as Pending | null
  if (!pending) throw new AppError('conflict', NOTHING_PENDING)
  // A field a pending change lacks (one stored before the field was reviewed) stays as approved.
  return decision === 'approve' ? { ...valuesOf(reviewed, pending, current), pending_change: null } : { pending_change: null }
}
