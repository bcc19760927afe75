/**
 * Control characters (Unicode category Cc: C0 U+0000-U+001F, DEL U+007F, C1 U+0080-U+009F).
 * Names refuse them (docs/decisions.md §3): no name a person reads holds one, and written as they
 * are into a CSV export, a terminal or a log line, they act (a line break, `ESC [31m`, CSI).
 * Other invisible characters stay allowed: bidirectional marks and zero-width joiners are parts of
 * real names (Arabic and Hebrew text, emoji sequences).
 */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/

/** How the rule reads in a message or a schema description. */
export const CONTROL_CHARACTERS_RULE = 'no control characters (U+0000 to U+001F, U+007F to U+009F: tab, line break, ESC, ...)'

/**
 * Why `text`, the value of `field`, is no name: it holds a control character, named with its
 * place (in characters, from 1); null when it holds none.
 */
export function controlCharacterProblem(field: string, text: string): string | null {
  const at = text.search(CONTROL_CHARACTER)
  if (at < 0) return null
  const code = text.charCodeAt(at).toString(16).toUpperCase().padStart(4, '0')
  return `${field} must hold ${CONTROL_CHARACTERS_RULE}; it has U+${code} at character ${[...text.slice(0, at)].length + 1}`
}
