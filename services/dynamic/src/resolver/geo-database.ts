import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

/**
 * The GeoLite2 country ranges that geoip-country ships (its `data/*.dat` files), read in place.
 *
 * Why not `require('geoip-country')`: that copies both files (8 MB) onto the heap, loads the
 * whole countries-list JSON it merges into every answer, and allocates that merged object per
 * lookup; 25-29 MB of resident memory in all, in every process that resolves. Here the files are
 * mapped (MAP_PRIVATE) where they can be (mappedOrRead): only the pages a lookup touches become
 * resident, they are the page cache's (shared by every process on the host, dropped under memory
 * pressure), and a lookup allocates nothing but the two-letter answer.
 *
 * File layout (geoip-country's own reader, `lib/geoip.js`): records sorted by range start.
 * IPv4, 10 bytes: start u32 BE, end u32 BE, country (2 ASCII bytes). IPv6, 18 bytes: the upper
 * 64 bits of start (u64 BE), of end, then the country; the lower 64 bits are not stored, so
 * ranges are /64 at their finest, as in that reader.
 */
export interface GeoDatabase {
  /** ISO 3166-1 alpha-2 country of an IPv4 or IPv6 address; null when the address is not a valid one or in no range. */
  country(address: string): string | null
}

const V4_RECORD = 10
const V6_RECORD = 18

/** Where geoip-country keeps its data files: resolved, never loaded. */
export const geoDataDir = (): string => join(dirname(Bun.resolveSync('geoip-country', import.meta.dir)), '..', 'data')

/** What opening a file for writing answers where it cannot be written: its mode, its owner, a read-only mount. */
const UNWRITABLE = new Set(['EACCES', 'EPERM', 'EROFS'])

/**
 * A data file's bytes: mapped where possible, else read into memory. Bun's mmap opens the file
 * for writing even for a private mapping, which the image refuses: its files are root's, its
 * user is not, and deploy/k8s mounts its root filesystem read-only. There the two files cost
 * their 8 MB of memory in each thread that resolves, instead of failing the resolver's start.
 */
function mappedOrRead(path: string): Uint8Array {
  try {
    return Bun.mmap(path, { shared: false })
  } catch (error) {
    if (!UNWRITABLE.has((error as { code?: string }).code ?? '')) throw error
    return readFileSync(path)
  }
}

export function openGeoDatabase(dir = geoDataDir()): GeoDatabase {
  const v4 = view(mappedOrRead(join(dir, 'geoip-country.dat')))
  const v6 = view(mappedOrRead(join(dir, 'geoip-country6.dat')))
  const v4Count = Math.floor(v4.byteLength / V4_RECORD)
  const v6Count = Math.floor(v6.byteLength / V6_RECORD)
  const code = (data: DataView, at: number) => String.fromCharCode(data.getUint8(at), data.getUint8(at + 1))

  function lookupV4(ip: number): string | null {
    // The last record whose start <= ip, then whether ip is within its end.
    let low = 0
    let high = v4Count - 1
    let found = -1
    while (low <= high) {
      const mid = (low + high) >>> 1
      if (v4.getUint32(mid * V4_RECORD) <= ip) {
        found = mid
        low = mid + 1
      } else high = mid - 1
    }
    if (found < 0) return null
    const at = found * V4_RECORD
    return ip <= v4.getUint32(at + 4) ? code(v4, at + 8) : null
  }

  function lookupV6(hi: number, lo: number): string | null {
    let low = 0
    let high = v6Count - 1
    let found = -1
    while (low <= high) {
      const mid = (low + high) >>> 1
      const at = mid * V6_RECORD
      if (compare(v6.getUint32(at), v6.getUint32(at + 4), hi, lo) <= 0) {
        found = mid
        low = mid + 1
      } else high = mid - 1
    }
    if (found < 0) return null
    const at = found * V6_RECORD
    return compare(hi, lo, v6.getUint32(at + 8), v6.getUint32(at + 12)) <= 0 ? code(v6, at + 16) : null
  }

  return {
    country(address) {
      const ip4 = parseIpv4(address)
      if (ip4 !== null) return lookupV4(ip4)
      const ip6 = parseIpv6(address)
      if (ip6 === null) return null
      if (ip6.mapped !== null) return lookupV4(ip6.mapped)
      return lookupV6(ip6.hi, ip6.lo)
    },
  }
}

const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)

/** Orders two unsigned 64-bit values given as (high u32, low u32). */
const compare = (aHi: number, aLo: number, bHi: number, bLo: number): number => (aHi !== bHi ? aHi - bHi : aLo - bLo)

/** A dotted quad (four decimal parts 0-255, no leading sign) as a u32, or null. */
export function parseIpv4(text: string, from = 0): number | null {
  let value = 0
  let part = 0
  let digits = 0
  let parts = 0
  for (let i = from; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 46 // the end closes the last part like a '.'
    if (c >= 48 && c <= 57) {
      if (++digits > 3) return null
      part = part * 10 + (c - 48)
    } else if (c === 46) {
      if (digits === 0 || part > 255 || ++parts > 4) return null
      value = value * 256 + part
      part = 0
      digits = 0
    } else return null
  }
  return parts === 4 ? value : null
}

/**
 * An IPv6 address (with `::`, an embedded dotted quad, an optional `%zone`) as the upper 64 bits
 * the database keys on, plus the IPv4 address when it is IPv4-mapped (`::ffff:a.b.c.d`); null when invalid.
 */
export function parseIpv6(address: string): { hi: number; lo: number; mapped: number | null } | null {
  const zone = address.indexOf('%')
  const text = zone >= 0 ? address.slice(0, zone) : address
  const groups: number[] = []
  let gap = -1 // index in groups where '::' stands
  let i = 0
  if (text.startsWith('::')) {
    gap = 0
    i = 2
    if (text.length === 2) return finish(groups, gap)
  }
  while (i < text.length) {
    const end = nextColon(text, i)
    const piece = text.slice(i, end)
    if (piece.includes('.')) {
      // An embedded IPv4 address: only as the last piece.
      if (end !== text.length) return null
      const v4 = parseIpv4(piece)
      if (v4 === null) return null
      groups.push(v4 >>> 16, v4 & 0xffff)
      break
    }
    if (piece.length === 0 || piece.length > 4 || !/^[0-9a-fA-F]+$/.test(piece)) return null
    groups.push(Number.parseInt(piece, 16))
    if (end === text.length) break
    if (text.charCodeAt(end + 1) === 58) {
      if (gap >= 0) return null // a second '::'
      gap = groups.length
      i = end + 2
      if (i === text.length) break
    } else {
      i = end + 1
      if (i === text.length) return null // a trailing single ':'
    }
  }
  return finish(groups, gap)
}

const nextColon = (text: string, from: number): number => {
  const at = text.indexOf(':', from)
  return at < 0 ? text.length : at
}

function finish(groups: number[], gap: number) {
  if (gap < 0 ? groups.length !== 8 : groups.length > 7) return null
  const full = gap < 0 ? groups : [...groups.slice(0, gap), ...new Array<number>(8 - groups.length).fill(0), ...groups.slice(gap)]
  const g = (k: number) => full[k]!
  const mapped = g(0) === 0 && g(1) === 0 && g(2) === 0 && g(3) === 0 && g(4) === 0 && g(5) === 0xffff ? (g(6) * 65536 + g(7)) : null
  return { hi: g(0) * 65536 + g(1), lo: g(2) * 65536 + g(3), mapped }
}
