import type { Logger } from '@lr/proto'
import { installLogger, log } from '@lr/platform/log'

/** A logged line as a test reads it: its message and its fields. */
export type LoggedLine = { msg: string } & Record<string, any>

/**
 * Installs a logger that keeps every line (any level) in `lines`, until `restore` puts the
 * previous logger back; for a test that asserts what shared code logged.
 */
export function captureLog(): { lines: LoggedLine[]; restore(): void } {
  const lines: LoggedLine[] = []
  const capture = (fields: object, msg: string) => void lines.push({ ...fields, msg })
  const logger = { error: capture, warn: capture, info: capture, debug: capture, child: () => logger } as unknown as Logger
  const previous = log()
  installLogger(logger)
  return { lines, restore: () => void installLogger(previous) }
}
