import type { Principal } from '@lr/proto'

/**
 * Per-request state set before routing. Auth and limits run in onRequest (so a bad key is a 403
 * before a bad route is a 404, contract §8), which is before Elysia's derive/resolve exist;
 * a WeakMap on the Request carries the principal to the routes without leaking.
 */
const principals = new WeakMap<Request, Principal>()

export const setPrincipal = (request: Request, principal: Principal) => principals.set(request, principal)

/** The verified principal of a /v1 request; the auth plugin guarantees it exists. */
export function principalOf(request: Request): Principal {
  const principal = principals.get(request)
  if (!principal) throw new Error('principalOf called on a request the auth plugin did not verify')
  return principal
}
