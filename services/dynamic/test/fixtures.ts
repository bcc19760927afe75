import { expect } from 'bun:test'
import { AppError, type Principal } from '@lr/proto'
import type { ResolverEntry } from '@lr/proto'
import { type ExportMode, exportStoreFor } from '@lr/library-records/testing/export-modes'
import { createSqliteDynamicStore } from '../src/adapters/dynamic-store.sqlite'
import type { DynamicStore } from '../src/ports'
import { createDynamicService, type DynamicDeps } from '../src/service'

export const T0 = 1_700_000_000
export const SHORT = 'https://qr.example'

export const personal: Principal = { account_id: 'acct_a', key_id: 'key_a', scope: 'personal', team_id: null, role: 'owner' }
export const otherPersonal: Principal = { account_id: 'acct_b', key_id: 'key_b', scope: 'personal', team_id: null, role: 'owner' }
export const writer: Principal = { account_id: 'acct_w', key_id: 'key_w', scope: 'business', team_id: 'team_1', role: 'writer' }
export const admin: Principal = { account_id: 'acct_adm', key_id: 'key_adm', scope: 'business', team_id: 'team_1', role: 'admin' }
/** The writer's own personal key: same account, other library. */
export const writerPersonal: Principal = { ...writer, key_id: 'key_wp', scope: 'personal', team_id: null, role: 'owner' }

/** A DynamicStore that counts the calls made to each of its methods (a hand-written wrapper, no mocks). */
export function countingStore(inner: DynamicStore) {
  const calls: Record<string, number> = {}
  const count = <A extends unknown[], R>(name: string, fn: (...args: A) => R) => (...args: A): R => {
    calls[name] = (calls[name] ?? 0) + 1
    return fn(...args)
  }
  const store: DynamicStore = {
    insertMany: count('insertMany', inner.insertMany),
    get: count('get', inner.get),
    list: count('list', inner.list),
    changes: count('changes', inner.changes),
    update: count('update', inner.update),
    delete: count('delete', inner.delete),
    resolve: count('resolve', inner.resolve),
    liveCodes: count('liveCodes', inner.liveCodes),
    findCode: count('findCode', inner.findCode),
    libraryOfCode: count('libraryOfCode', inner.libraryOfCode),
    ping: count('ping', inner.ping),
    findReceipt: count('findReceipt', inner.findReceipt),
    ...(inner.exportPage && { exportPage: count('exportPage', inner.exportPage) }),
    ...(inner.changePosition && { changePosition: count('changePosition', inner.changePosition) }),
    exportFrom: inner.exportFrom,
  }
  return { store, calls, total: () => Object.values(calls).reduce((a, b) => a + b, 0) }
}

/**
 * A dynamic service over an in-memory SQLite store (counting its calls), a clock the test moves,
 * and the change events it announced; with the mode 'export worker', over a store on a file
 * whose exports its Worker makes (closeExportStores after).
 */
export function setup(deps: Partial<DynamicDeps> = {}, mode: ExportMode = 'this thread') {
  const { db, store, exportWorker } = exportStoreFor(mode, 'dynamic', createSqliteDynamicStore)
  const counted = countingStore(store)
  let clock = T0
  const announced: ResolverEntry[] = []
  const service = createDynamicService({
    store: counted.store,
    now: () => clock,
    shortBaseUrl: SHORT,
    announce: async (entry) => void announced.push(entry),
    exportWorker,
    ...deps,
  })
  return { service, store: counted.store, calls: counted.calls, announced, tick: (seconds: number) => void (clock += seconds), close: () => db.close() }
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
export const notFound = (code: string) => ({ code: 'not_found' as const, message: `no dynamic QR code "${code}" in this library` })
