import { AppError, controlCharacterProblem, type CreatedKey, KEY_NAME_MAX, type KeyCreateRequest, type KeyList, type KeyListRequest, type KeyRevoked, type KeyRevokeRequest } from '@lr/proto'
import type { AuthDeps, AuthStore, StoredKey } from '../ports'
import { canHoldBusinessKey, hasApiAccess } from '../rules'
import { hashSecret, looksLikeKey, newId, newSecret } from '../secret'
import { answeringConflicts, duplicateId, liveKeyExists } from '../conflicts'
import { requireAccount, requireTeam } from './lookups'

export async function createKey({ store, now, activationDelayS }: AuthDeps, req: KeyCreateRequest): Promise<CreatedKey> {
  if (req.scope === 'personal' && req.team_id !== undefined)
    throw new AppError('bad_request', 'a personal key belongs to no team: leave team_id out')
  if (req.scope === 'business' && req.team_id === undefined)
    throw new AppError('bad_request', 'a business key needs the team_id of its shared library')
  const name = keyName(req.name)
  const account = await requireAccount(store, req.account_id)
  const at = now()
  if (!hasApiAccess(account, at))
    throw new AppError('forbidden', `account ${account.account_id} has tier ${account.tier} and no live temporary grant: it has no API access and cannot create a key`)
  if (req.team_id !== undefined) {
    await requireTeam(store, req.team_id)
    const membership = await store.getMembership(req.team_id, account.account_id)
    if (!canHoldBusinessKey(membership?.role))
      throw new AppError('forbidden', `account ${account.account_id} is not a writer or admin of team ${req.team_id}: only they can create business keys`)
  }
  // The store's unique index is the guard against races; this check only names the key in the way.
  const live = await store.findLiveKey(account.account_id, req.scope)
  if (live) throw liveKeyExists(account.account_id, req.scope, live.key_id)

  const secret = newSecret(req.scope)
  const key: StoredKey = {
    key_id: newId('key'),
    account_id: account.account_id,
    scope: req.scope,
    name,
    team_id: req.team_id ?? null,
    hash: hashSecret(secret),
    last_four: secret.slice(-4),
    created_at: at,
    active_at: at + activationDelayS,
    revoked_at: null,
    last_used_at: null,
  }
  // A racing create that passed the check above too: the index refuses one of the two.
  await answeringConflicts(store.insertKey(key), {
    live_key: () => liveKeyExists(key.account_id, key.scope),
    key_id: () => duplicateId('key', key.key_id),
    hash: () => duplicateId('key', key.key_id),
  })
  const { key_id, scope, team_id, created_at, active_at } = key
  return { key_id, key: secret, name, scope, team_id, created_at, active_at }
}

/** A key's name trimmed, 1 to KEY_NAME_MAX characters (code points), printable; null when none. */
function keyName(name: string | undefined): string | null {
  if (name === undefined) return null
  const clean = name.trim()
  const length = [...clean].length
  if (length < 1 || length > KEY_NAME_MAX) throw new AppError('bad_request', `a key name must be 1 to ${KEY_NAME_MAX} characters after trimming`)
  const problem = controlCharacterProblem('a key name', clean)
  if (problem) throw new AppError('bad_request', problem)
  return clean
}

/** Without `by` the operator revokes; with it, only the key's owner or an admin of the key's team may. */
export async function revokeKey({ store, now }: AuthDeps, req: KeyRevokeRequest): Promise<KeyRevoked> {
  const key = await keyToRevoke(store, req)
  if (req.by !== undefined && req.by !== key.account_id) {
    await requireAccount(store, req.by) // a typo in --by says so, not that someone may not revoke
    const membership = key.team_id ? await store.getMembership(key.team_id, req.by) : null
    if (membership?.role !== 'admin')
      throw new AppError('forbidden', `account ${req.by} may not revoke key ${key.key_id}: only its owner or an admin of its team can`)
  }
  const revoked = await store.revokeKey(key.key_id, now())
  if (!revoked?.revoked_at) throw new AppError('not_found', `key ${key.key_id} not found`)
  return { key_id: revoked.key_id, account_id: revoked.account_id, revoked_at: revoked.revoked_at }
}

/**
 * The key a revoke names, by id or by its secret: a leaked key is found as its secret (in a
 * repository, a log, a secret scanner's report), and only the store's hash can tell its id. The
 * secret is never echoed: the message lands in terminals and CI logs.
 */
async function keyToRevoke(store: AuthStore, req: KeyRevokeRequest): Promise<StoredKey> {
  if ((req.key_id === undefined) === (req.key === undefined))
    throw new AppError('bad_request', 'give exactly one of key_id and key (the secret)')
  if (req.key_id !== undefined) {
    const key = await store.getKey(req.key_id)
    if (!key) throw new AppError('not_found', `key ${req.key_id} not found`)
    return key
  }
  const key = looksLikeKey(req.key!) ? await store.findKeyByHash(hashSecret(req.key!)) : null
  if (!key) throw new AppError('not_found', 'no key of this deployment has this secret')
  return key
}

export async function listKeys({ store }: AuthDeps, req: KeyListRequest): Promise<KeyList> {
  await requireAccount(store, req.account_id)
  const keys = await store.listKeys(req.account_id)
  return {
    keys: keys.map(({ key_id, name, scope, team_id, last_four, created_at, active_at, revoked_at, last_used_at }) => ({
      key_id, name, scope, team_id, last_four, created_at, active_at, revoked_at, last_used_at,
    })),
  }
}
