import { createHash } from 'node:crypto'
import { AppError, IDEMPOTENCY_TTL_S, type KeyClaims, type Receipt, ReceiptTaken, type ReceiptStore } from '@lr/proto'

/** Stable JSON: object keys sorted, so the same body with its keys reordered matches. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object')
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`
  return JSON.stringify(value) ?? 'null'
}

export const fingerprintOf = (route: string, body: unknown) =>
  createHash('sha256').update(route).update('\n').update(canonical(body)).digest('hex')

/** What an Idempotency-Key may be: 1 to 255 visible ASCII characters (the API document states it too). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/

/** The Idempotency-Key header as sent: IDEMPOTENCY_KEY_PATTERN, else a 400. */
export function checkIdempotencyKey(key: unknown): string | undefined {
  if (key === undefined || key === null) return undefined
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key))
    throw new AppError('bad_request', 'Idempotency-Key must be 1 to 255 visible ASCII characters')
  return key
}

const usedElsewhere = () => new AppError('idempotency_conflict', 'this Idempotency-Key was already used with a different request')

/** The first answer again, or 422 when the key was used with another route or body. */
export function replay(receipt: Receipt, fingerprint: string): unknown {
  if (receipt.fingerprint !== fingerprint) throw usedElsewhere()
  return receipt.response
}

/**
 * Runs a write (a create, a review) at most once per (API key, Idempotency-Key) within
 * IDEMPOTENCY_TTL_S. `create(receipt)` must store its write and the receipt atomically, throwing
 * ReceiptTaken when a concurrent twin stored it first; when it fails and a twin's receipt is
 * there by then, the twin's answer is replayed. With `claims`
 * (receipts kept apart per service), the key is claimed for this route and body first, so the
 * same key on another service's route is 422 too; validate the body before calling this, since
 * a claim is never taken back and a refused request must not hold its key. `checks` (a check
 * that costs a look-up, such as a DNS query) run only when no earlier answer replays, before the
 * key is claimed: a retry of a write that succeeded is answered whatever they would say now.
 */
export async function idempotent<T>(
  store: ReceiptStore,
  request: { scope: string; key: string | undefined; route: string; body: unknown; now: number; checks?: () => Promise<void> },
  create: (receipt: ((response: T) => Receipt) | undefined) => Promise<T>,
  claims?: KeyClaims,
): Promise<T> {
  const key = checkIdempotencyKey(request.key)
  if (!key) {
    await request.checks?.()
    return create(undefined)
  }
  const fingerprint = fingerprintOf(request.route, request.body)
  const since = request.now - IDEMPOTENCY_TTL_S
  const earlier = await store.findReceipt(request.scope, key, since)
  if (earlier) return replay(earlier, fingerprint) as T
  await request.checks?.()
  // Claimed before the records are written: a crash in between leaves a claim that a retry of
  // the same request passes, never records that another route's request could double.
  if (claims && (await claims.claim(request.scope, key, fingerprint, request.now, since)) !== fingerprint) throw usedElsewhere()
  for (let attempt = 1; ; attempt++) {
    try {
      return await create((response) => ({ scope: request.scope, key, fingerprint, response, created_at: request.now }))
    } catch (error) {
      // A twin of this request (same key) may have answered meanwhile: a create's store says so
      // (ReceiptTaken); a change fails on the state the twin left (a review finds nothing pending
      // any more, or If-Match names the version before it). Either way the twin's answer is this one's.
      const twin = await store.findReceipt(request.scope, key, since).catch(() => null)
      if (twin) return replay(twin, fingerprint) as T
      if (!(error instanceof ReceiptTaken)) throw error
      // The twin's receipt that refused this one's is gone: the twin's write failed and took it
      // back (MongoDB without transactions writes the receipt first), so this request runs as if
      // alone. It was a 500 (the store's conflict, unknown to the status table).
      if (attempt >= TWIN_ATTEMPTS) throw new AppError('unavailable', 'another request with this Idempotency-Key kept failing meanwhile; retry')
    }
  }
}

/** Runs of a request whose receipt a twin's (that then failed) kept refusing, before a 503. */
const TWIN_ATTEMPTS = 3
