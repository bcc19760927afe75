import { errorFields, log } from '@lr/platform/log'
import { AppError, type Principal } from '@lr/proto'
import type { AuthDeps } from '../ports'
import { canHoldBusinessKey, hasApiAccess, LAST_USED_EVERY_S } from '../rules'
import { hashSecret, looksLikeKey } from '../secret'

const forbidden = (message: string, retryAfter?: number) =>
  new AppError('forbidden', message, retryAfter === undefined ? undefined : { retryAfter })

/**
 * Every call reads the store: a revocation, a team removal, a downgrade or an expired grant
 * is refused on the very next request.
 */
export async function verifyKey({ store, now }: AuthDeps, secret: string | null | undefined): Promise<Principal> {
  if (!secret) throw forbidden('missing API key: send it in the x-api-key header')
  const key = looksLikeKey(secret) ? await store.findKeyByHash(hashSecret(secret)) : null
  if (!key) throw forbidden('invalid API key')
  if (key.revoked_at !== null) throw forbidden('API key has been revoked')
  const at = now()
  if (at < key.active_at) throw forbidden('API key is not active yet', Math.max(1, key.active_at - at))

  const account = await store.getAccount(key.account_id)
  if (!account) throw forbidden('invalid API key')
  if (!hasApiAccess(account, at))
    throw forbidden('this account no longer has API access (plan or temporary grant); a new key will not help')

  let role: Principal['role'] = 'owner'
  if (key.scope === 'business') {
    const membership = key.team_id ? await store.getMembership(key.team_id, key.account_id) : null
    if (!canHoldBusinessKey(membership?.role)) throw forbidden("API key's owner is no longer a writer or admin of the team")
    role = membership.role
  }

  if (key.last_used_at === null || at - key.last_used_at >= LAST_USED_EVERY_S) {
    // Best effort: a failed bookkeeping write must not refuse a valid key.
    await store.touchKey(key, at).catch((error) => log().warn({ key_id: key.key_id, ...errorFields(error) }, 'could not record key use'))
  }
  return { account_id: key.account_id, key_id: key.key_id, scope: key.scope, team_id: key.team_id, role }
}
