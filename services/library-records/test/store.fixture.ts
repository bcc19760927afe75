import type { LibraryStore, RecordBase } from '../src/ports'

/** One kind's records for the store contract, and how its store behaves where kinds differ. */
export interface StoreFixture<R extends RecordBase> {
  idField: keyof R & string
  urlField: keyof R & string
  /** A deterministic record numbered `n` (ids, URLs and times grow with n). */
  record(n: number, over?: Partial<RecordBase> & Record<string, unknown>): R
}

/** A fresh, empty store of one adapter, and how to dispose of it. */
export interface StoreHarness<S> {
  store: S
  cleanup(): Promise<void>
}

/** The contract writes patches of the shared fields and the URL, whatever the kind's patch type. */
export type AnyLibraryStore<R extends RecordBase> = LibraryStore<R, Partial<RecordBase> & Record<string, unknown>>

/** Two libraries. */
export const A = 'acct:a'
export const B = 'team:b'

export const idOf = <R extends RecordBase>(fixture: StoreFixture<R>, record: R) => record[fixture.idField] as string
export const rangeOf = <R extends RecordBase>(fixture: StoreFixture<R>, from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => fixture.record(from + i))
