import type { ThreadError } from './thread-messages'

/** A thread's error in one line, for the start-up line and log lines: `TypeError: Invalid URL (ERR_INVALID_URL)`. */
export const threadErrorLine = ({ type, code, message }: ThreadError): string => `${type}: ${message.split('\n')[0]}${code === undefined ? '' : ` (${code})`}`

/** How Bun prints an error's first line: `TypeError: ...`, `SystemError [ERR_X]: ...`; a plain Error as `error: ...`. */
const ERROR_LINE = /^([A-Z][\w$]*|error)((?: \[[^\]]*\])?: .*)$/
const CODE_LINE = /^\s*code: "([^"]*)"$/

/**
 * The error of what Bun prints for an error a thread did not catch, which is all its ErrorEvent
 * carries (`error` is null across threads): the source lines of the throw (`25 | ...`), a caret,
 * then `TypeError: message`, the error's properties (` code: "X"`) and its stack. That error line
 * and its code, else the text's first line that is not blank.
 */
export function printedErrorLine(printed: string): string {
  const lines = printed.split('\n')
  const at = lines.findIndex((line) => ERROR_LINE.test(line))
  if (at < 0) return lines.find((line) => line.trim() !== '') ?? printed
  const [, type, rest] = ERROR_LINE.exec(lines[at]!)!
  const code = lines.slice(at + 1).map((line) => CODE_LINE.exec(line)?.[1]).find((found) => found !== undefined)
  return `${type === 'error' ? 'Error' : type}${rest}${code === undefined ? '' : ` (${code})`}`
}
