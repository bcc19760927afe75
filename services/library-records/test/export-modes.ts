import { afterAll, afterEach, describe, expect } from 'bun:test'
import type { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqlite } from '@lr/platform/sqlite'
import { type ExportWorker, exportWorkerOf } from '../src/export-in-worker'
import type { LibraryStore, RecordBase } from '../src/ports'

/** Where a service's export chunks are made: on its own thread, or by its export Worker (export-in-worker.ts). */
export const EXPORT_MODES = ['this thread', 'export worker'] as const
export type ExportMode = (typeof EXPORT_MODES)[number]

const opened: (() => Promise<void>)[] = []
const failures: unknown[] = []
/** Chunks the Workers of exportStoreFor made, since the start of the file. */
let madeByWorkers = 0

/**
 * A SQLite store for a service test: in memory for 'this thread'; on a file of its own with the
 * store's export Worker for 'export worker' (a Worker cannot open `:memory:`). A chunk the Worker
 * fails to make is recorded, so closeExportStores() fails the test instead of the service's
 * quiet fallback to its own thread passing it.
 */
export function exportStoreFor<R extends RecordBase, S extends LibraryStore<R, any>>(mode: ExportMode, name: string, create: (db: Database) => S): { db: Database; store: S; exportWorker?: ExportWorker } {
  if (mode === 'this thread') {
    const db = openSqlite(':memory:')
    return { db, store: create(db) }
  }
  const dir = mkdtempSync(join(tmpdir(), `lr-${name}-export-`))
  const db = openSqlite(join(dir, `${name}.sqlite`))
  const store = create(db)
  const worker = exportWorkerOf(store, name)
  if (!worker) throw new Error(`${name}: a store on a file offers no export worker`)
  opened.push(async () => {
    await worker.close()
    db.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const exportWorker: ExportWorker = {
    ...worker,
    chunk: (request) => worker.chunk(request).then(
      (chunk) => (madeByWorkers++, chunk),
      (error) => {
        failures.push(error)
        throw error
      },
    ),
  }
  return { db, store, exportWorker }
}

/** For afterEach: ends the Workers and files of exportStoreFor, and fails when a Worker failed a chunk. */
export async function closeExportStores(): Promise<void> {
  for (const close of opened.splice(0)) await close()
  const failed = failures.splice(0)
  if (failed.length > 0) throw new Error(`the export worker failed ${failed.length} chunk(s): ${failed.map(String).join('; ')}`)
}

/**
 * `cases` once per export mode, as `title (mode)`: each case then runs with the chunks made on the
 * service's thread and again with its export Worker making them. `setupIn` is the suite's fixture
 * taking the mode; `cases` gets it bound to the mode.
 */
export function describeEachExportMode<D, T>(title: string, setupIn: (deps: D | undefined, mode: ExportMode) => T, cases: (setup: (deps?: D) => T) => void): void {
  for (const mode of EXPORT_MODES) {
    describe(`${title} (${mode})`, () => {
      const madeBefore = madeByWorkers
      afterEach(closeExportStores)
      // A service that ignored its Worker would pass every case on its own thread.
      if (mode === 'export worker') afterAll(() => expect(madeByWorkers).toBeGreaterThan(madeBefore))
      cases((deps) => setupIn(deps, mode))
    })
  }
}
