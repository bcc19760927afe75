import { AppError, StoreConflict } from '@lr/proto'

/** The AppError a promise rejects with; fails the test when it resolves or rejects otherwise. */
export async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(() => null, (e: unknown) => e)
  if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`)
  return error
}

/** The StoreConflict a store write rejects with; fails the test when it resolves or rejects otherwise. */
export async function conflict(promise: Promise<unknown>): Promise<StoreConflict> {
  const error = await promise.then(() => null, (e: unknown) => e)
  if (!(error instanceof StoreConflict)) throw new Error(`expected a StoreConflict, got ${String(error)}`)
  return error
}
