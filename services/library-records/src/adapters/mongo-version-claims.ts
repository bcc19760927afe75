import type { Connection } from 'mongoose'
import { AppError } from '@lr/proto'
import { currentDeadline } from '@lr/platform/request-context'

/**
 * One writer per version of a record on MongoDB (README "MongoDB compatibility"). A change of a
 * document is a compare-and-set on its `rev`, which MongoDB applies atomically but FerretDB v1
 * does not: several writers that read one version at once all matched it and all wrote, so two
 * If-Match PATCHes of one ETag both answered 200 (the second overwrote the first), and a PATCH
 * landing over a DELETE brought the deleted record back. Before it writes, a writer therefore
 * claims the version it read: a unique `_id` (library, id, rev) in `<collection>_claims`, the one
 * thing both servers decide atomically between replicas. The loser waits until the winner has
 * written and released its claim, then reads again (a stale If-Match is then a 412).
 *
 * Versions never come back (a change moves `rev` to a new, higher position), so a released
 * claim can never be needed again: a late writer of that version claims it anew and finds the
 * document already moved on. A claim whose writer died between claim and write (kill -9) holds
 * its version for CLAIM_GRACE_MS, by the database server's clock; then the next writer takes it over.
 *
 * A writer waits its turn only until its caller's deadline (request-context.ts): the gateway has
 * answered 504 by then, and a write landing after that (on FerretDB, 50 PATCHes of one record
 * queue for seconds; a probe saw one land 72 s after its 504) comes after the client's next
 * PATCH and undoes it. Past the deadline no claim is taken: AppError('timeout'), nothing written.
 */

/** How long a claim holds its version for a writer that has not released it: a live one writes within milliseconds. */
export const CLAIM_GRACE_MS = 10_000

/** Pauses between looks at a claim held by another writer: short at first, the winner is usually done within a few milliseconds. */
const WAITS_MS = [2, 5, 10, 20, 50, 100]

interface ClaimDoc {
  _id: string
  /** When taken, by the database server's clock (ms). */
  at: number
}

export interface VersionClaim {
  release(): Promise<void>
}

/** Throws once the caller of the request being handled has stopped waiting (no deadline: background work, never). */
function pastDeadline() {
  const deadline = currentDeadline()
  if (deadline !== undefined && Date.now() >= deadline) throw new AppError('timeout', 'the record was being written by other requests until this one was past its deadline')
}

const isDuplicateKey = (error: unknown) => (error as { code?: number })?.code === 11000

/** The version claims of one collection; `now` is the database server's clock (ms). */
export function mongoVersionClaims(conn: Connection, collection: string, now: () => number) {
  const claims = conn.db!.collection<ClaimDoc>(`${collection}_claims`)

  async function insert(_id: string): Promise<VersionClaim | null> {
    try {
      await claims.insertOne({ _id, at: now() })
    } catch (error) {
      if (isDuplicateKey(error)) return null
      throw error
    }
    return { release: async () => void (await claims.deleteOne({ _id })) }
  }

  return {
    /**
     * Claims version `rev` of the record: the claim, to release once written (or failed); or
     * null, after the writer holding it released it, when another writer had it: read again.
     */
    async take(library: string, id: string, rev: number): Promise<VersionClaim | null> {
      const _id = `${library}\n${id}\n${rev}`
      for (let look = 0; ; look++) {
        pastDeadline()
        const claim = await insert(_id)
        if (claim) return claim
        await Bun.sleep(WAITS_MS[Math.min(look, WAITS_MS.length - 1)]!)
        const held = await claims.findOne({ _id })
        if (!held) return null
        // A writer that died before releasing: its claim is taken back once (the `at` read), then claimed anew.
        if (held.at < now() - CLAIM_GRACE_MS) await claims.deleteOne({ _id, at: held.at })
      }
    },
  }
}
