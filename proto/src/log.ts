/**
 * What code that logs depends on: leveled, structured lines (an object of fields, then a
 * message). The platform's adapter writes them as JSON (pino); see docs/decisions.md §1.
 */
export interface Logger {
  error(fields: object, message: string): void
  warn(fields: object, message: string): void
  info(fields: object, message: string): void
  debug(fields: object, message: string): void
  /** A logger whose every line also carries `bindings`. */
  child(bindings: Record<string, unknown>): Logger
}
