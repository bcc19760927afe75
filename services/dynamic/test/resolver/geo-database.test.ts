import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { geoDataDir, openGeoDatabase, parseIpv4, parseIpv6 } from '../../src/resolver/geo-database'

/** geoip-country's own reader: the oracle the in-place reader must agree with on every address. */
const reference = require('geoip-country') as { lookup(ip: string): { country: string } | null }
const geo = openGeoDatabase()

/** A deterministic stream of pseudo-random u32s (xorshift), so a failure names a reproducible address. */
function* u32s(seed: number, count: number) {
  let x = seed
  for (let i = 0; i < count; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    yield x >>> 0
  }
}
const quad = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.')

describe('openGeoDatabase', () => {
  test('answers as geoip-country does for 200,000 random IPv4 addresses', () => {
    const differ: string[] = []
    let found = 0
    for (const n of u32s(2463534242, 200_000)) {
      const ip = quad(n)
      const expected = reference.lookup(ip)?.country ?? null
      if (expected) found++
      if (geo.country(ip) !== expected) differ.push(`${ip}: ${geo.country(ip)} vs ${expected}`)
    }
    expect(differ.slice(0, 5)).toEqual([])
    expect(found).toBeGreaterThan(100_000) // most of the space is assigned: the comparison is not of nulls
  })

  // Probes at and just beside the ends of ranges the files hold: where an off-by-one would show.
  const dir = geoDataDir()
  const file = (name: string) => new DataView(readFileSync(`${dir}/${name}`).buffer)

  test('answers as geoip-country does at the first and last address of 5,000 IPv4 ranges and beside them', () => {
    const data = file('geoip-country.dat')
    const records = data.byteLength / 10
    const differ: string[] = []
    for (const n of u32s(1234567, 5_000)) {
      const at = (n % records) * 10
      const start = data.getUint32(at)
      const end = data.getUint32(at + 4)
      for (const probe of [start - 1, start, start + 1, end - 1, end, end + 1]) {
        if (probe < 0 || probe > 0xffffffff) continue
        const expected = reference.lookup(quad(probe))?.country ?? null
        if (geo.country(quad(probe)) !== expected) differ.push(`${quad(probe)}: ${geo.country(quad(probe))} vs ${expected}`)
      }
    }
    expect(differ.slice(0, 5)).toEqual([])
  })

  test('answers as geoip-country does at the first and last /64 of 5,000 IPv6 ranges and beside them', () => {
    const data = file('geoip-country6.dat')
    const records = data.byteLength / 18
    const differ: string[] = []
    let found = 0
    const text = (hi: bigint, tail: string) => `${[48n, 32n, 16n, 0n].map((s) => ((hi >> s) & 0xffffn).toString(16)).join(':')}:${tail}`
    for (const n of u32s(88172645, 5_000)) {
      const at = (n % records) * 18
      const start = data.getBigUint64(at)
      const end = data.getBigUint64(at + 8)
      for (const [hi, tail] of [[start - 1n, 'ffff:ffff:ffff:ffff'], [start, '0:0:0:0'], [start, '1:2:3:4'], [end, 'ffff:ffff:ffff:ffff'], [end + 1n, '0:0:0:0']] as const) {
        if (hi < 0n || hi > 0xffffffffffffffffn) continue
        const ip = text(hi, tail)
        const expected = reference.lookup(ip)?.country ?? null
        if (expected) found++
        if (geo.country(ip) !== expected) differ.push(`${ip}: ${geo.country(ip)} vs ${expected}`)
      }
    }
    expect(differ.slice(0, 5)).toEqual([])
    expect(found).toBeGreaterThan(15_000)
  })

  test('knows well-known addresses, mapped and compressed forms, and nothing of private or bad ones', () => {
    expect(geo.country('8.8.8.8')).toBe('US')
    expect(geo.country('81.2.69.142')).toBe('GB')
    expect(geo.country('::ffff:212.27.48.10')).toBe('FR')
    expect(geo.country('0:0:0:0:0:FFFF:212.27.48.10')).toBe('FR')
    expect(geo.country('2a00:1450:4001:81b::200e')).toBe('DE')
    expect(geo.country('2a00:1450:4001:81b::200e%eth0')).toBe('DE')
    for (const none of ['10.0.0.1', '127.0.0.1', '::1', '::', '', 'not-an-ip', '8.8.8', '8.8.8.8.8', '256.1.1.1', '1..1.1', ' 8.8.8.8', '2a00:1450::81b::1', 'g::1', '2a00:1450:4001:81b:0:0:0:200e:1']) {
      expect(geo.country(none)).toBeNull()
    }
  })
})

describe('address parsing', () => {
  test('a dotted quad is what node:net calls IPv4, and its value', () => {
    for (const text of ['0.0.0.0', '255.255.255.255', '1.2.3.4', '01.2.3.4', '1.2.3', '1.2.3.4.', '.1.2.3', '1.2.3.256', '1.2.3.-4', '1.2.3.4 ', '1.2.3.0004', 'a.b.c.d']) {
      const parsed = parseIpv4(text)
      expect({ text, valid: parsed !== null }).toEqual({ text, valid: isIP(text) === 4 || text === '01.2.3.4' })
    }
    expect(parseIpv4('1.2.3.4')).toBe(0x01020304)
    expect(parseIpv4('255.255.255.255')).toBe(0xffffffff)
  })

  test('IPv6 text is valid exactly when node:net says so, and keyed on its upper 64 bits', () => {
    for (const text of ['::', '::1', '1::', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7::', '::2:3:4:5:6:7:8', '1::8', '::ffff:1.2.3.4', '64:ff9b::1.2.3.4', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7', '1:::2', ':1::2', '1::2:', '12345::', '1::2::3', 'fe80::1%eth0', '::1.2.3', '1.2.3.4::']) {
      expect({ text, valid: parseIpv6(text) !== null }).toEqual({ text, valid: isIP(text) === 6 })
    }
    expect(parseIpv6('2a00:1450:4001:81b::200e')).toEqual({ hi: 0x2a001450, lo: 0x4001081b, mapped: null })
    expect(parseIpv6('::ffff:1.2.3.4')).toEqual({ hi: 0, lo: 0, mapped: 0x01020304 })
    expect(parseIpv6('ffff:ffff:ffff:ffff::')).toEqual({ hi: 0xffffffff, lo: 0xffffffff, mapped: null })
  })
})
