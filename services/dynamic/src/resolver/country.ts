import { COUNTRIES } from './countries'
import { type GeoDatabase, openGeoDatabase } from './geo-database'

let geo: GeoDatabase | undefined
/** Opened on first use (two read-only mappings, no read of the files), or by preloadGeoIp() at start-up. */
const database = (): GeoDatabase => (geo ??= openGeoDatabase())

/** Opens the embedded country database now, so a missing data file fails the start, not a scan. */
export function preloadGeoIp(): void {
  database()
}

/** Where Bun.serve's second argument tells the client's socket address. */
export interface AddressSource {
  requestIP(request: Request): { address: string } | null
}

/** An address as a proxy may write it: `1.2.3.4:5678`, `[2001:db8::1]:443` -> the bare address. */
function bare(address: string): string {
  const text = address.trim()
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text)
  if (bracketed) return bracketed[1]!
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(text)
  return v4WithPort ? v4WithPort[1]! : text
}

/**
 * The client's address: behind `trustedHops` proxies (TRUST_PROXY=N) the N-th X-Forwarded-For
 * entry from the right, the one the outermost trusted proxy added, else (or when that header is
 * missing) the socket's; null when neither is known. Not the first entry: a proxy that appends
 * keeps whatever the client sent in front, so the first was the client's to choose (a probe made
 * five visitors, in five countries, of one). With fewer entries than hops, the first.
 */
export function clientAddress(request: Request, server: AddressSource | undefined, trustedHops: number): string | null {
  if (trustedHops > 0) {
    const entries = request.headers.get('x-forwarded-for')?.split(',')
    const forwarded = entries?.[Math.max(0, entries.length - trustedHops)]
    if (forwarded && forwarded.trim() !== '') return bare(forwarded)
  }
  const socket = server?.requestIP(request)?.address
  return socket ? bare(socket) : null
}

/**
 * ISO 3166-1 alpha-2 country of a scan, or `unknown` (docs/decisions.md §5; the codes: ./countries).
 * Behind a trusted proxy CF-IPCountry decides when sent (`XX`: Cloudflare does not know, `T1`: Tor,
 * `EU`, `AP`: no country; all `unknown`);
 * otherwise the address is looked up in the GeoLite2 database embedded in geoip-country
 * (read in place by ./geo-database; nothing is downloaded at run time); `unknown` when neither
 * answers (private addresses and text that is no address too).
 */
export function countryOf(headers: Headers, address: string | null, trustProxy: boolean): string {
  const header = trustProxy ? headers.get('cf-ipcountry')?.trim().toUpperCase() : undefined
  if (header) return COUNTRIES.has(header) ? header : 'unknown'
  if (!address) return 'unknown'
  const found = database().country(address)
  return found && COUNTRIES.has(found) ? found : 'unknown'
}
