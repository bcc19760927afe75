import { AppError, type KeyScope } from '@lr/proto'

/**
 * The errors a store throws when a unique index refuses a write. Every adapter builds them here,
 * so SQLite's constraint error and Mongo's duplicate key (11000) reach the caller identically.
 */
export const emailTaken = (email: string) => new AppError('bad_request', `an account with email ${email} already exists`)

export const liveKeyExists = (accountId: string, scope: KeyScope, keyId?: string) =>
  new AppError(
    'bad_request',
    `account ${accountId} already has an unrevoked ${scope} key${keyId ? ` (${keyId})` : ''}: revoke it before creating a new one`,
  )

export const duplicateId = (what: string, id: string) => new AppError('bad_request', `${what} ${id} already exists`)
