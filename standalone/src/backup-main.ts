import { loadConfigOrExit } from '@lr/platform/lifecycle'
import { BackupError, backupDataDir } from './backup'

/**
 * `bun run backup --to DIR`: a consistent copy of DATA_DIR's SQLite stores, taken while the
 * product runs (backup.ts). Prints one JSON line (the directory and its files); a command line
 * it cannot run exits 2, a backup it cannot make exits 1, each with one line on stderr.
 */
const USAGE = 'usage: bun run backup --to DIR (a new directory; DATA_DIR and STORE as for bun start)'
const args = Bun.argv.slice(2)
const at = args.indexOf('--to')
const to = at >= 0 ? args[at + 1] : undefined
if (!to || to.startsWith('--') || args.length !== 2) {
  console.error(`[backup] ${USAGE}`)
  process.exit(2)
}
const config = loadConfigOrExit(Bun.env)
if (config.STORE !== 'sqlite') {
  console.error('[backup] STORE=mongo keeps nothing to copy under DATA_DIR: back MongoDB up with its own tools (mongodump, or the snapshots of its host)')
  process.exit(2)
}
try {
  console.log(JSON.stringify(backupDataDir(config.DATA_DIR, to)))
} catch (error) {
  if (!(error instanceof BackupError)) throw error
  console.error(`[backup] cannot back up: ${error.message}`)
  process.exit(1)
}
