import { expect } from 'bun:test'
import { AppError, type Principal } from '@lr/proto'
import { type ExportMode, exportStoreFor } from '@lr/library-records/testing/export-modes'
import { createSqliteRecordStore } from '../src/adapters/record-store.sqlite'
import { createRecordsService, type RecordsDeps } from '../src/service'

export const T0 = 1_700_000_000

export const personal: Principal = { account_id: 'acct_a', key_id: 'key_a', scope: 'personal', team_id: null, role: 'owner' }
export const otherPersonal: Principal = { account_id: 'acct_b', key_id: 'key_b', scope: 'personal', team_id: null, role: 'owner' }
export const writer: Principal = { account_id: 'acct_w', key_id: 'key_w', scope: 'business', team_id: 'team_1', role: 'writer' }
export const admin: Principal = { account_id: 'acct_adm', key_id: 'key_adm', scope: 'business', team_id: 'team_1', role: 'admin' }
/** The writer's own personal key: same account, other library. */
export const writerPersonal: Principal = { ...writer, key_id: 'key_wp', scope: 'personal', team_id: null, role: 'owner' }

/**
 * A records service over an in-memory SQLite store and a clock the test moves; with the mode
 * 'export worker', over a store on a file whose exports its Worker makes (closeExportStores after).
 */
export function setup(deps: Partial<RecordsDeps> = {}, mode: ExportMode = 'this thread') {
  const { db, store, exportWorker } = exportStoreFor(mode, 'records', createSqliteRecordStore)
  let clock = T0
  const service = createRecordsService({ store, now: () => clock, exportWorker, ...deps })
  return { service, store, tick: (seconds: number) => void (clock += seconds), close: () => db.close() }
}

/** Awaits a rejection and returns it as the wire form: code, message and details together. */
export async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(AppError)
  return (error as AppError).toWire()
}

export const badRequest = (message: string) => ({ code: 'bad_request' as const, message })
