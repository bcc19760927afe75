import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'

/**
 * Where a webhook may be sent (docs/decisions.md "Webhooks"): http or https, and never an address
 * of this network (loopback, private, link-local, unique-local, CGNAT, multicast, reserved; IPv4
 * and IPv6, IPv4-mapped and NAT64 included) unless WEBHOOKS_ALLOW_PRIVATE=1. The host is resolved
 * when the endpoint is created and again before every attempt (DNS rebinding).
 */

const v4 = (a: string) => a.split('.').reduce((n, part) => n * 256 + Number(part), 0)
const V4_BLOCKED: [number, number][] = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
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

function isBlockedV6(address: string): boolean {
  const g = groupsOf(address)
  const embeddedV4 = () => `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`
  if (g.slice(0, 7).every((x) => x === 0)) return true // :: and ::1 (and the deprecated IPv4-compatible ::a.b.c.d)
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return isBlockedV4(embeddedV4()) // ::ffff:a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return isBlockedV4(embeddedV4()) // NAT64
  if ((g[0]! & 0xfe00) === 0xfc00) return true // fc00::/7 unique-local
  if ((g[0]! & 0xffc0) === 0xfe80) return true // fe80::/10 link-local
  if ((g[0]! & 0xffc0) === 0xfec0) return true // fec0::/10 site-local (deprecated)
  if ((g[0]! & 0xff00) === 0xff00) return true // multicast
  if (g[0] === 0x2001 && g[1] === 0xdb8) return true // documentation
  return false
}

/** True for an address webhooks are not sent to without WEBHOOKS_ALLOW_PRIVATE=1. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return isBlockedV4(address)
  if (family === 6) return isBlockedV6(address)
  return true // not an address at all: refused
}

/** Why a URL cannot take webhooks, or null when it can; `resolve` finds a host name's addresses. */
export async function destinationProblem(
  raw: string,
  allowPrivate: boolean,
  resolve: (host: string) => Promise<string[]> = resolveHost,
): Promise<string | null> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'url must be an absolute http or https URL'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must use http or https'
  if (url.username || url.password) return 'url must not carry credentials; authenticate the sender by the signature'
  if (allowPrivate) return null
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const refused = `url points to a private, loopback or link-local address (${host}); such destinations are refused unless WEBHOOKS_ALLOW_PRIVATE=1`
  if (isIP(host)) return isPrivateAddress(host) ? refused : null
  if (host === 'localhost' || host.endsWith('.localhost')) return refused
  let addresses: string[]
  try {
    addresses = await resolve(host)
  } catch {
    return `url host ${JSON.stringify(host)} does not resolve`
  }
  if (addresses.length === 0) return `url host ${JSON.stringify(host)} does not resolve`
  return addresses.some(isPrivateAddress) ? refused : null
}

async function resolveHost(host: string): Promise<string[]> {
  return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address)
}
