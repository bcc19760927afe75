/**
 * List replies a gateway keeps and a service confirms (docs: README "Operations", list replies).
 * A gateway that holds a page for a library and query sends its tag as ListRequest.known; the
 * service answers `{"unchanged":true}` when its page is still that one, else the page with its
 * tag: `{"tag":"<tag>","page":<page JSON>}` (tag null where the store has no change positions).
 * A page then crosses the bus only when it changed. Built and read here only, so the gateway can
 * cut the page's bytes out without parsing them (tags are [0-9a-z.], never escaped).
 */

/** The answer to a gateway whose kept page is still the page. */
export const UNCHANGED_TEXT = '{"unchanged":true}'

/** The tag of a page: the library's change position and a hash of the exact text. */
export const pageTagOf = (position: number, text: string): string => `${position.toString(36)}.${Bun.hash(text).toString(36)}`

/** A changed (or first) page for a gateway, as the service sends it. */
export const keptListText = (tag: string | null, pageText: string): string => `{"tag":${tag === null ? 'null' : `"${tag}"`},"page":${pageText}}`

const decoder = new TextDecoder()
const UNCHANGED = new TextEncoder().encode(UNCHANGED_TEXT)
const TAG_START = new TextEncoder().encode('{"tag":')
/** The head of a tagged answer, up to where the page begins. */
const HEAD = /^\{"tag":(?:"([0-9a-z.]{1,64})"|null),"page":/

/**
 * Reads a service's answer to ListRequest.known: unchanged, or the page's bytes (a view of
 * `bytes`) and tag. A service of a version before `known` answers the page alone, which reads as
 * a page without a tag: a gateway may be upgraded before its services.
 */
export function readKeptList(bytes: Uint8Array): { unchanged: true } | { unchanged: false; tag: string | null; page: Uint8Array } {
  if (bytes.length === UNCHANGED.length && UNCHANGED.every((b, i) => bytes[i] === b)) return { unchanged: true }
  if (!TAG_START.every((b, i) => bytes[i] === b)) return { unchanged: false, tag: null, page: bytes }
  // The head holds `{"tag":...,"page":`; a tag is at most a few dozen characters.
  const head = HEAD.exec(decoder.decode(bytes.subarray(0, 128)))
  if (!head || bytes[bytes.length - 1] !== 0x7d) throw new Error('malformed list reply')
  // The head is ASCII: its length in characters is its length in bytes.
  return { unchanged: false, tag: head[1] ?? null, page: bytes.subarray(head[0].length, bytes.length - 1) }
}
