import { AppError, type Principal } from '@lr/proto'

/**
 * Per-request state set before routing. Auth and limits run in onRequest (so a bad key is a 403
 * before a bad route is a 404, docs/decisions.md §8), which is before Elysia's derive/resolve exist;
 * a WeakMap on the Request carries the principal to the routes without leaking.
 */
const principals = new WeakMap<Request, Principal>()

export const setPrincipal = (request: Request, principal: Principal) => principals.set(request, principal)

/** The principal when the request's key was verified (for the access log), else undefined. */
export const principalIfVerified = (request: Request): Principal | undefined => principals.get(request)

/** The client's Idempotency-Key header, forwarded with a POST (its service checks it: 400 when malformed). */
export function idempotencyKeyOf(request: Request): { idempotency_key?: string } {
  const key = request.headers.get('idempotency-key')
  return key === null ? {} : { idempotency_key: key }
}

/** The envelope of a create: principal, body, and the client's Idempotency-Key when sent. */
export const createRequest = (request: Request, body: unknown) => ({ principal: principalOf(request), body, ...idempotencyKeyOf(request) })

/** The verified principal of a /v1 request; the auth plugin guarantees it exists. */
export function principalOf(request: Request): Principal {
  const principal = principals.get(request)
  if (!principal) throw new Error('principalOf called on a request the auth plugin did not verify')
  return principal
}

/** The client's If-Match header, forwarded to the service with a PATCH or DELETE (412 on a stale version). */
export function ifMatchOf(request: Request): { if_match?: string } {
  const tag = request.headers.get('if-match')
  return tag === null ? {} : { if_match: tag }
}

/**
 * A route that takes no query refuses one (400), as the list routes refuse an unknown parameter:
 * `GET /v1/dynqrcodes/export?status=draft` answered every record, as if filtered.
 */
export function noQuery(request: Request): void {
  const at = request.url.indexOf('?')
  if (at < 0 || at === request.url.length - 1) return
  const name = new URLSearchParams(request.url.slice(at + 1)).keys().next().value
  if (name !== undefined) throw new AppError('bad_request', `unknown query parameter ${JSON.stringify(name)}: this route takes none`)
}
