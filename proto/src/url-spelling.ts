/**
 * How a URL must be written to mean what it reads as (docs/decisions.md §3): the rules records'
 * `url` / `destination_url` and webhook endpoints' `url` share. The WHATWG parser accepts
 * spellings whose meaning differs from their look (it drops a tab or line break anywhere), so they
 * are refused as written, not only as parsed; what remains is stored in its normal form.
 */

/** Whitespace or control characters: URL parsing would silently drop or escape them. */
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/

/** The authority as written: after `scheme:` and any slashes or backslashes, up to a path, query or fragment. */
const AUTHORITY = /^[a-z][a-z\d+.-]*:[/\\]*([^/\\?#]*)/i

/** Whether `text` holds whitespace or a control character (refused before parsing). */
export const hasUrlWhitespace = (text: string): boolean => WHITESPACE_OR_CONTROL.test(text)

/**
 * Whether `text`, parsed as `url`, names a user or password before its host: `https://paypal.com@evil.example`
 * reads as paypal.com and opens evil.example. An empty userinfo (`https://@x.example`), which the
 * parser drops, counts too, as written: the rule is "no @ before the host".
 */
export const hasUserinfo = (text: string, url: URL): boolean =>
  url.username !== '' || url.password !== '' || AUTHORITY.exec(text)?.[1]?.includes('@') === true
