import { describe, expect, it } from 'bun:test'
import { connectionsOf, destinationProblem, isPrivateAddress } from '../src/destination'

const resolvesTo = (...addresses: string[]) => async () => addresses

describe('webhook destinations', () => {
  it('refuses loopback, private, link-local, unique-local, CGNAT and reserved addresses, IPv4 and IPv6', () => {
    const refused = ['127.0.0.1', '127.9.9.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255',
      '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '64:ff9b::a00:1', 'fe80::1%eth0']
    expect(refused.filter((a) => !isPrivateAddress(a))).toEqual([])
  })

  it('refuses every IPv6 form that reaches loopback, the metadata address or a reserved block (found by a probe)', () => {
    const refused = [
      '::127.0.0.1', '::a9fe:a9fe', // IPv4-compatible
      '::ffff:0:7f00:1', '::ffff:0:169.254.169.254', // IPv4-translated
      '64:ff9b:1::a9fe:a9fe', '64:ff9b:1:ffff::7f00:1', // local-use NAT64
      '2002:7f00:1::', '2002:a9fe:a9fe::', '2002:c0a8:101::1', // 6to4 of 127/8, 169.254/16, 192.168/16
      '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:2::1', // Teredo, benchmarking
      '100::1', '3fff::1', '5f00::1', '4000::1', '::2', '192.88.99.1',
    ]
    expect(refused.filter((a) => !isPrivateAddress(a))).toEqual([])
  })

  it('accepts public addresses', () => {
    const allowed = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '2001:4860:4860::8888', '2a00:1450:4001::1', '3fff:1000::1']
    expect(allowed.filter(isPrivateAddress)).toEqual([])
  })

  it('refuses a literal private address or localhost in the URL, and a host resolving to one (any of its addresses)', async () => {
    const problems = await Promise.all([
      destinationProblem('http://127.0.0.1:8080/hook', false),
      destinationProblem('http://[::1]/hook', false),
      destinationProblem('http://[::ffff:192.168.0.1]/hook', false),
      destinationProblem('http://localhost/hook', false),
      destinationProblem('https://hooks.example.com/x', false, resolvesTo('93.184.216.34', '10.0.0.5')),
    ])
    expect(problems.every((p) => p?.includes('WEBHOOKS_ALLOW_PRIVATE=1'))).toBe(true)
  })

  it('accepts a public host; with WEBHOOKS_ALLOW_PRIVATE=1 private ones too', async () => {
    expect(await destinationProblem('https://hooks.example.com/x', false, resolvesTo('93.184.216.34'))).toBeNull()
    expect(await destinationProblem('http://127.0.0.1:8080/hook', true)).toBeNull()
  })

  it('refuses other schemes, credentials, bad URLs and hosts that do not resolve', async () => {
    const fails = async () => {
      throw new Error('ENOTFOUND')
    }
    expect(await destinationProblem('ftp://example.com/x', true)).toBe('url must use http or https')
    expect(await destinationProblem('https://u:p@example.com/x', true)).toContain('credentials')
    expect(await destinationProblem('not a url', true)).toContain('absolute')
    expect(await destinationProblem('https://nowhere.invalid/x', false, fails)).toContain('does not resolve')
  })

  it('connects an attempt to each checked address, keeping the name for Host and TLS', async () => {
    expect(await connectionsOf('https://Hooks.Example.com:8443/in?x=1', false, resolvesTo('93.184.216.34', '2606:4700:4700:0::1111'))).toEqual({
      connections: [
        { url: 'https://93.184.216.34:8443/in?x=1', host: 'hooks.example.com:8443', servername: 'hooks.example.com' },
        { url: 'https://[2606:4700:4700::1111]:8443/in?x=1', host: 'hooks.example.com:8443', servername: 'hooks.example.com' },
      ],
    })
    expect(await connectionsOf('http://hooks.example.com/in', false, resolvesTo('93.184.216.34'))).toEqual({ connections: [{ url: 'http://93.184.216.34/in', host: 'hooks.example.com' }] })
    // An address in the URL is connected to as it is: no lookup.
    expect(await connectionsOf('https://93.184.216.34/in', false, async () => { throw new Error('no lookup expected') })).toEqual({ connections: [{ url: 'https://93.184.216.34/in' }] })
  })

  it('refuses the attempt when any address is private, unless WEBHOOKS_ALLOW_PRIVATE=1; skips addresses no URL can name', async () => {
    const both = resolvesTo('93.184.216.34', '10.0.0.5')
    expect(await connectionsOf('https://hooks.example.com/x', false, both)).toEqual({ problem: expect.stringContaining('WEBHOOKS_ALLOW_PRIVATE=1') })
    expect(await connectionsOf('http://localhost:8080/x', false, resolvesTo('127.0.0.1'))).toEqual({ problem: expect.stringContaining('WEBHOOKS_ALLOW_PRIVATE=1') })
    expect(await connectionsOf('https://hooks.example.com/x', true, both)).toEqual({
      connections: ['93.184.216.34', '10.0.0.5'].map((a) => ({ url: `https://${a}/x`, host: 'hooks.example.com', servername: 'hooks.example.com' })),
    })
    expect(await connectionsOf('http://hooks.internal/x', true, resolvesTo('fe80::1%eth0', '10.0.0.5'))).toEqual({ connections: [{ url: 'http://10.0.0.5/x', host: 'hooks.internal' }] })
    expect(await connectionsOf('http://hooks.internal/x', true, resolvesTo('fe80::1%eth0'))).toEqual({ problem: expect.stringContaining('no address a URL can name') })
    expect(await connectionsOf('ftp://hooks.example.com/x', true)).toEqual({ problem: 'url must use http or https' })
  })
})
