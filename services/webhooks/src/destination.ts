import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { hasUrlWhitespace, hasUserinfo, URL_MAX } from '@lr/proto'

/**
 * Where a webhook may be sent (docs/decisions.md "Webhooks"): http or https, and never an address
 * of this network (loopback, private, link-local, unique-local, CGNAT, multicast, reserved; IPv4
 * and IPv6, where only global unicast passes and an IPv6 address carrying an IPv4 one is judged by it) unless WEBHOOKS_ALLOW_PRIVATE=1. The host is resolved
 * when the endpoint is created and again for every attempt, which connects to the addresses it
 * checked (connectionsOf: DNS rebinding).
 */

const v4 = (a: string) => a.split('.').reduce((n, part) => n * 256 + Number(part), 0)
const V4_BLOCKED: [number, number][] = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
].map(([base, bits]) => [v4(base as string), bits as number])

function isBlockedV4(address: string): boolean {
  const n = v4(address)
  return V4_BLOCKED.some(([base, bits]) => Math.floor(n / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits)))
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part expanded). */
function groupsOf(address: string): number[] {
  let text = address.toLowerCase().split('%')[0]!
  const dotted = text.match(/(\d+\.\d+\.\d+\.\d+)$/)
  if (dotted) {
    const n = v4(dotted[1]!)
    text = text.slice(0, -dotted[1]!.length) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`
  }
  const [head, tail] = text.split('::') as [string, string | undefined]
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)))
  const left = parse(head)
  const right = tail === undefined ? [] : parse(tail)
  return [...left, ...Array(8 - left.length - right.length).fill(0), ...right]
}

/**
 * IPv6: only global unicast (2000::/3) is let through, less the blocks of IANA's special-purpose
 * registry that are not a host of the public Internet; an address that carries an IPv4 one (mapped,
 * NAT64's well-known prefix, 6to4) is judged by it. Refusing by default, not by a list of known bad
 * blocks, is what keeps a form the list forgot (::a.b.c.d, ::ffff:0:a.b.c.d, 100::/64) out.
 */
function isBlockedV6(address: string): boolean {
  const g = groupsOf(address)
  const v4At = (i: number) => `${g[i]! >> 8}.${g[i]! & 255}.${g[i + 1]! >> 8}.${g[i + 1]! & 255}`
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return isBlockedV4(v4At(6)) // ::ffff:a.b.c.d, mapped
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return isBlockedV4(v4At(6)) // 64:ff9b::/96, NAT64
  if ((g[0]! & 0xe000) !== 0x2000) return true // outside 2000::/3: ::, ::1, ::/96, 64:ff9b:1::/48, 100::/64, fc00::/7, fe80::/10, ff00::/8...
  if (g[0] === 0x2002) return isBlockedV4(v4At(1)) // 2002::/16, 6to4: the IPv4 address in groups 1 and 2
  if (g[0] === 0x2001 && g[1]! < 0x200) return true // 2001::/23, protocol assignments: Teredo (2001::/32), benchmarking, ORCHID
  if (g[0] === 0x2001 && g[1] === 0xdb8) return true // 2001:db8::/32, documentation
  if (g[0] === 0x3fff && g[1]! < 0x1000) return true // 3fff::/20, documentation
  if (g[0] === 0x5f00) return true // 5f00::/16, SRv6 segment identifiers
  return false
}

/** True for an address webhooks are not sent to without WEBHOOKS_ALLOW_PRIVATE=1. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return isBlockedV4(address)
  if (family === 6) return isBlockedV6(address)
  return true // not an address at all: refused
}

/**
 * Where one attempt connects: the endpoint's URL with its host replaced by one address checked
 * just before, and the name the endpoint was given kept for the request (`host`, the Host header)
 * and for TLS (`servername`: the SNI and the name the certificate must carry). No name is looked
 * up again between the check and the connect, so an answer that changes in between (DNS
 * rebinding) cannot send the attempt somewhere the check did not see.
 */
export interface Connection {
  url: string
  host?: string
  servername?: string
}

type Resolve = (host: string) => Promise<string[]>

/** The URL, or why it is not one webhooks may use whatever it points to. */
function parseDestination(raw: string): URL | string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'url must be an absolute http or https URL'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must use http or https'
  if (url.username || url.password) return 'url must not carry credentials; authenticate the sender by the signature'
  return url
}

/**
 * A new endpoint's URL in its normal form (`new URL(url).href`), which is what is stored, listed
 * and sent to, or why it is refused as written: whitespace or a control character (the parser drops
 * a line break or tab, so `https://hooks.example\n.evil.example/` was listed as one host and sent
 * to another) or an `@` before the host, as records' URLs (docs/decisions.md §3). The normal form
 * reads as what it opens (`https://a.example\@b.example/` is listed as `https://a.example/@b.example/`).
 * Endpoints stored before the rule keep their URL as it was.
 */
export function normalDestination(raw: string): { url: string } | { problem: string } {
  if (hasUrlWhitespace(raw)) return { problem: 'url must be an absolute http or https URL without whitespace or control characters' }
  const url = parseDestination(raw)
  if (typeof url === 'string') return { problem: url }
  if (hasUserinfo(raw, url)) return { problem: 'url must not carry credentials; authenticate the sender by the signature' }
  if (url.href.length > URL_MAX) return { problem: `url must be at most ${URL_MAX} characters once normalised; this one has ${url.href.length}` }
  return { url: url.href }
}

/**
 * The addresses a URL's host stands for, checked unless `allowPrivate`: null for an address
 * written in the URL (connected to as it is), or why the URL is refused.
 */
async function addressesOf(url: URL, allowPrivate: boolean, resolve: Resolve): Promise<{ addresses: string[] | null } | { problem: string }> {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const refused = { problem: `url points to a private, loopback or link-local address (${host}); such destinations are refused unless WEBHOOKS_ALLOW_PRIVATE=1` }
  if (isIP(host)) return !allowPrivate && isPrivateAddress(host) ? refused : { addresses: null }
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost'))) return refused
  const unresolved = { problem: `url host ${JSON.stringify(host)} does not resolve` }
  let addresses: string[]
  try {
    addresses = await resolve(host)
  } catch {
    return unresolved
  }
  if (addresses.length === 0) return unresolved
  return !allowPrivate && addresses.some(isPrivateAddress) ? refused : { addresses }
}

/** Why a URL cannot take webhooks, or null when it can; `resolve` finds a host name's addresses. */
export async function destinationProblem(raw: string, allowPrivate: boolean, resolve: Resolve = resolveHost): Promise<string | null> {
  const url = parseDestination(raw)
  if (typeof url === 'string') return url
  if (allowPrivate) return null
  const found = await addressesOf(url, false, resolve)
  return 'problem' in found ? found.problem : null
}

/**
 * Where an attempt to `raw` may connect, in order (one per address of its host, as `resolve`
 * answers them), or why it may not: the check of destinationProblem made on the very addresses
 * connected to. With WEBHOOKS_ALLOW_PRIVATE=1 nothing is refused, but the attempt still connects
 * to the addresses looked up here.
 */
export async function connectionsOf(raw: string, allowPrivate: boolean, resolve: Resolve = resolveHost): Promise<{ connections: Connection[] } | { problem: string }> {
  const url = parseDestination(raw)
  if (typeof url === 'string') return { problem: url }
  const found = await addressesOf(url, allowPrivate, resolve)
  if ('problem' in found) return found
  if (found.addresses === null) return { connections: [{ url: url.href }] }
  const connections = found.addresses.flatMap((address) => pinned(url, address) ?? [])
  return connections.length > 0 ? { connections } : { problem: `url host ${JSON.stringify(url.hostname)} has no address a URL can name` }
}

/** `url` sent to `address`; undefined for an address no URL can carry (an IPv6 zone, fe80::1%eth0). */
function pinned(url: URL, address: string): Connection | undefined {
  const literal = URL.parse(`http://${isIP(address) === 6 ? `[${address}]` : address}/`)?.hostname
  if (!literal || !isIP(literal.replace(/^\[|\]$/g, ''))) return undefined
  const to = new URL(url.href)
  to.hostname = literal
  // URL keeps the old host when it cannot take the new one: that name would be looked up again.
  if (to.hostname !== literal) return undefined
  const connection: Connection = { url: to.href, host: url.host }
  if (url.protocol === 'https:') connection.servername = url.hostname.replace(/\.$/, '')
  return connection
}

async function resolveHost(host: string): Promise<string[]> {
  return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address)
}
