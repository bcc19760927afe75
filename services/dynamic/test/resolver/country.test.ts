import { describe, expect, it } from 'bun:test'
import { clientAddress, countryOf } from '../../src/resolver/country'
import { COUNTRIES } from '../../src/resolver/countries'

const headers = (init: Record<string, string> = {}) => new Headers(init)
const socket = (address: string) => ({ requestIP: () => ({ address }) })
const request = (init: Record<string, string> = {}) => new Request('http://short.test/AbcDef12', { headers: init })

describe('countryOf', () => {
  it('takes CF-IPCountry behind a trusted proxy, in upper case', () => {
    expect(countryOf(headers({ 'cf-ipcountry': 'de' }), '8.8.8.8', true)).toBe('DE')
  })

  it('answers unknown for Cloudflare\'s XX (not known) and T1 (Tor)', () => {
    expect(countryOf(headers({ 'cf-ipcountry': 'XX' }), '8.8.8.8', true)).toBe('unknown')
    expect(countryOf(headers({ 'cf-ipcountry': 'T1' }), '8.8.8.8', true)).toBe('unknown')
  })

  it('answers unknown for two letters that name no country (EU, AP, ZZ, a user-assigned code), and keeps XK (Kosovo)', () => {
    for (const code of ['EU', 'AP', 'ZZ', 'QM', 'XA', 'AA', 'UK', 'eu'])
      expect({ code, country: countryOf(headers({ 'cf-ipcountry': code }), '8.8.8.8', true) }).toEqual({ code, country: 'unknown' })
    for (const code of ['GB', 'XK', 'SS', 'ax']) expect(countryOf(headers({ 'cf-ipcountry': code }), '8.8.8.8', true)).toBe(code.toUpperCase())
  })

  it('knows the 249 assigned ISO 3166-1 codes and XK, each a region with a name', () => {
    const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' })
    expect(COUNTRIES.size).toBe(250)
    expect([...COUNTRIES].filter((code) => !/^[A-Z]{2}$/.test(code) || !names.of(code))).toEqual([])
  })

  it('answers unknown for a CF-IPCountry that is not two letters', () => {
    expect(countryOf(headers({ 'cf-ipcountry': 'Germany' }), null, true)).toBe('unknown')
  })

  it('ignores CF-IPCountry without a trusted proxy and looks the address up', () => {
    expect(countryOf(headers({ 'cf-ipcountry': 'DE' }), '8.8.8.8', false)).toBe('US')
  })

  it('looks the address up in the embedded GeoIP database when the proxy sent no country', () => {
    expect(countryOf(headers(), '81.2.69.142', true)).toBe('GB')
  })

  it('looks up IPv6 and IPv4-mapped addresses', () => {
    expect(countryOf(headers(), '2a00:1450:4001:81b::200e', false)).toBe('DE')
    expect(countryOf(headers(), '::ffff:212.27.48.10', false)).toBe('FR')
  })

  it('answers unknown for private, loopback and malformed addresses and for none', () => {
    for (const address of ['10.0.0.1', '127.0.0.1', '::1', 'not-an-ip', null]) expect(countryOf(headers(), address, false)).toBe('unknown')
  })
})

describe('clientAddress', () => {
  it('takes the socket address without a trusted proxy, ignoring X-Forwarded-For', () => {
    expect(clientAddress(request({ 'x-forwarded-for': '8.8.8.8' }), socket('10.1.2.3'), 0)).toBe('10.1.2.3')
  })

  it('takes the entry the outermost of N trusted proxies added: the N-th from the right, never what the client put in front', () => {
    // One proxy that appends: the client sent "1.1.1.1" itself; the proxy saw 8.8.8.8.
    expect(clientAddress(request({ 'x-forwarded-for': '1.1.1.1, 8.8.8.8' }), socket('10.1.2.3'), 1)).toBe('8.8.8.8')
    // One that overwrites: the only entry.
    expect(clientAddress(request({ 'x-forwarded-for': ' 8.8.8.8 ' }), socket('10.1.2.3'), 1)).toBe('8.8.8.8')
    // Two proxies (a CDN, then the ingress, which added the CDN's address).
    expect(clientAddress(request({ 'x-forwarded-for': '1.1.1.1, 8.8.8.8, 10.0.0.1' }), socket('10.1.2.3'), 2)).toBe('8.8.8.8')
    // Fewer entries than hops: the first.
    expect(clientAddress(request({ 'x-forwarded-for': '8.8.8.8' }), socket('10.1.2.3'), 3)).toBe('8.8.8.8')
  })

  it('strips a port and IPv6 brackets a proxy may add', () => {
    expect(clientAddress(request({ 'x-forwarded-for': '81.2.69.142:51234' }), undefined, 1)).toBe('81.2.69.142')
    expect(clientAddress(request({ 'x-forwarded-for': '[2a00:1450:4001:81b::200e]:443' }), undefined, 1)).toBe('2a00:1450:4001:81b::200e')
  })

  it('falls back to the socket address when the trusted proxy sent no X-Forwarded-For', () => {
    expect(clientAddress(request(), socket('81.2.69.142'), 1)).toBe('81.2.69.142')
  })

  it('answers null when no address is known', () => {
    expect(clientAddress(request(), undefined, 0)).toBeNull()
  })
})
