// Run by log.test.ts: the process's real logger (createLogger, JSON lines on stdout) writes one
// line per kind of error a process logs, the error of each as the code at its place passes it.
import { Database } from 'bun:sqlite'
import { readFileSync } from 'node:fs'
import { AppError } from '@lr/proto'
import { errorFields, startLogging } from '@lr/platform/log'
import { StartupError } from '@lr/platform/startup'

const log = startLogging('probe', 'info')
const failure = (run: () => unknown): unknown => {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('did not throw')
}

// A write refused as on a file SQLite opened read-only (SQLITE_READONLY), as withStoreMetrics logs it.
const db = new Database(':memory:')
db.exec('PRAGMA query_only = 1')
log.warn({ store: 'things', ...errorFields(failure(() => db.exec('CREATE TABLE t (a)'))) }, 'sqlite')
// The gateway's error from a bus reply (AppError.fromWire), a system call's, a subclass that keeps the name Error.
log.error(errorFields(AppError.fromWire({ code: 'unavailable', message: 'the records store is unreachable' })), 'bus reply')
log.error(errorFields(failure(() => readFileSync('/nonexistent/lr'))), 'system call')
log.error(errorFields(new StartupError('port taken')), 'subclass')
// What a resolver thread posts to its main thread (structured clone: a plain object), and a thrown string.
log.error(structuredClone(errorFields(new TypeError('not a function'))), 'from a thread')
log.error(errorFields('a thrown string'), 'thrown value')
// An Error itself as `err`, as pino's own callers pass it.
log.error({ err: new RangeError('out of range') }, 'error itself')
