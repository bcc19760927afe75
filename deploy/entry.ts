import { join } from 'node:path'
import { ENTRY_POINTS, type ProcessName } from './entry-points'

/**
 * The container's entry point: `bun run deploy/entry.ts <process>` runs one process of
 * TRANSPORT=nats mode (a key of ENTRY_POINTS), so one image serves every Deployment.
 */
const name = process.argv[2] ?? ''
if (!Object.hasOwn(ENTRY_POINTS, name)) {
  console.error(`usage: bun run deploy/entry.ts <${Object.keys(ENTRY_POINTS).join('|')}> (got "${name}")`)
  process.exit(2)
}
await import(join(import.meta.dir, '..', ENTRY_POINTS[name as ProcessName]))
