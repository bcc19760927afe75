import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { targetOf } from '../../src/resolver/cache'
import { destinationFor, osOf } from '../../src/resolver/device'
import { destinationOf } from '../../src/resolver/location'
import { personal } from '../fixtures'
import { resolverSetup, settle } from './fixtures'

const AGENTS: [string, string, string | null][] = [
  ['iPhone Safari', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1', 'ios'],
  ['iPad (mobile site)', 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1', 'ios'],
  ['Android Chrome', 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36', 'android'],
  ['Windows Edge', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 Edg/120.0', 'windows'],
  ['macOS Safari (also iPadOS asking for the desktop site)', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15', 'macos'],
  ['Linux Firefox', 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0', 'linux'],
  ['ChromeOS', 'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36', 'linux'],
  ['curl', 'curl/8.5.0', null],
  ['no User-Agent', '', null],
]

describe('osOf', () => {
  for (const [name, agent, os] of AGENTS) it(`reads ${name} as ${os}`, () => expect(osOf(agent)).toBe(os as never))
})

describe('destinationFor', () => {
  const fallback = destinationOf('https://example.com/web')
  const rules = [
    { os: 'ios' as const, destination: destinationOf('https://apps.example/ios') },
    { os: 'android' as const, destination: destinationOf('https://apps.example/android') },
  ]
  it('picks the rule of the scan\'s OS', () => {
    expect(destinationFor(fallback, rules, AGENTS[2]![1]).location).toBe('https://apps.example/android')
  })
  it('falls back to destination_url when no rule names the OS, or the OS is unknown or absent', () => {
    for (const agent of [AGENTS[3]![1], 'curl/8.5.0', '']) expect(destinationFor(fallback, rules, agent)).toBe(fallback)
  })
})

describe('targetOf with rules', () => {
  it('prepares each rule\'s destination once per entry, and adds no rules to a code without them', () => {
    const target = targetOf({ code: 'abcdefg1', destination_url: 'https://example.com/', status: 'active', deleted: false, redirect_rules: [{ os: 'ios', destination_url: 'https://apps.example/ios?a=1' }] })
    expect(target).toEqual({ status: 302, destination: destinationOf('https://example.com/'), rules: [{ os: 'ios', destination: destinationOf('https://apps.example/ios?a=1') }] })
    expect('rules' in targetOf({ code: 'abcdefg1', destination_url: 'https://example.com/', status: 'active', deleted: false })).toBe(false)
  })
})

describe('resolver with device rules', () => {
  let s: ReturnType<typeof resolverSetup>
  beforeEach(() => {
    s = resolverSetup()
  })
  afterEach(() => s.close())

  it('redirects by the User-Agent, forwards the scan\'s query onto a rule\'s destination, and follows a change of the rules at once', async () => {
    const [record] = (await s.service.create(personal, {
      destination_url: 'https://example.com/web', name: 'x',
      redirect_rules: [{ os: 'ios', destination_url: 'https://apps.example/ios?ref=qr' }, { os: 'android', destination_url: 'https://apps.example/android' }],
    })).created
    const scanAs = (agent: string, query = '') => s.scan(`/${record!.code}${query}`, { headers: { 'user-agent': agent } })
    expect((await scanAs(AGENTS[0]![1], '?ref=poster&t=1')).headers.get('location')).toBe('https://apps.example/ios?ref=qr&t=1')
    expect((await scanAs(AGENTS[2]![1])).headers.get('location')).toBe('https://apps.example/android')
    expect((await scanAs(AGENTS[3]![1])).headers.get('location')).toBe('https://example.com/web')
    await s.service.update(personal, record!.code, { redirect_rules: [] })
    await settle()
    expect((await scanAs(AGENTS[0]![1])).headers.get('location')).toBe('https://example.com/web')
  })
})
