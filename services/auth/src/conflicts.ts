import { AppError, type KeyScope, StoreConflict } from '@lr/proto'

/**
 * The words a client reads when a unique key refuses a write. Adapters throw StoreConflict
 * (SQLite's constraint error and Mongo's duplicate key alike); the service answers with these,
 * so every store gives the same message. The pre-checks of the operations use them too.
 */
export const emailTaken = (email: string) => new AppError('bad_request', `an account with email ${email} already exists`)

export const liveKeyExists = (accountId: string, scope: KeyScope, keyId?: string) =>
  new AppError(
    'bad_request',
    `account ${accountId} already has an unrevoked ${scope} key${keyId ? ` (${keyId})` : ''}: revoke it before creating a new one`,
  )

export const duplicateId = (what: string, id: string) => new AppError('bad_request', `${what} ${id} already exists`)

/**
 * Awaits a store write; a StoreConflict on a key `answers` names becomes that answer. Any other
 * conflict is rethrown as it is (the bus reports it as an internal error: a store bug).
 */
export async function answeringConflicts<T>(write: Promise<T>, answers: Record<string, () => AppError>): Promise<T> {
  try {
    return await write
  } catch (error) {
    const answer = error instanceof StoreConflict ? answers[error.key] : undefined
    throw answer ? answer() : error
  }
}
