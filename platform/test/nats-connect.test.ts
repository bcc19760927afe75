import { describe, expect, it } from 'bun:test'
import { natsConnectOptions, natsServerOptions } from '../src/nats-connect'
import { withoutCredentials } from '../src/startup'

// nats.js ignores credentials written in a server URL; the real refusal and the connection with
// them are shown against a real server in test/nats-closed.test.ts.
describe('natsServerOptions: NATS_URL as nats.js takes it', () => {
  it('leaves a URL without credentials as it is', () => {
    expect(natsServerOptions('nats://127.0.0.1:4222')).toEqual({ servers: ['nats://127.0.0.1:4222'] })
  })

  it('takes a user and password out of the URL, percent-escapes decoded', () => {
    expect(natsServerOptions('nats://library:s%40cret%3Ax@nats.example:4222')).toEqual({ servers: ['nats://nats.example:4222'], user: 'library', pass: 's@cret:x' })
  })

  it('takes a token (a user part with no colon)', () => {
    expect(natsServerOptions('nats://t0ken@nats.example:4222')).toEqual({ servers: ['nats://nats.example:4222'], token: 't0ken' })
  })

  it('reads several servers, comma-separated, each without its credentials', () => {
    expect(natsServerOptions('nats://a:b@n1:4222, nats://a:b@n2:4222,n3:4222')).toEqual({ servers: ['nats://n1:4222', 'nats://n2:4222', 'n3:4222'], user: 'a', pass: 'b' })
  })

  it('is what every connection of the product is made with', () => {
    const options = natsConnectOptions('nats://u:p@h:4222', 'gateway')
    expect([options.servers, options.user, options.pass, options.name]).toEqual([['nats://h:4222'], 'u', 'p', 'gateway'])
  })

  it('requires TLS when a server is tls:// (nats.js alone would talk plain text to it)', () => {
    expect(natsConnectOptions('tls://u:p@h:4222', 'gateway')).toMatchObject({ servers: ['tls://h:4222'], tls: {} })
    expect(natsServerOptions('nats://a:4222,tls://b:4222').tls).toEqual({})
    expect(natsServerOptions('nats://a:4222,b:4222').tls).toBeUndefined()
  })

  it('leaves no credentials of any server in what a log line shows of the URL', () => {
    expect(withoutCredentials('nats://a:b@n1:4222,nats://t0ken@n2:4222,nats://n3:4222')).toBe('nats://n1:4222,nats://n2:4222,nats://n3:4222')
    expect(withoutCredentials('user:s3cret@n1:4222')).toBe('n1:4222')
    expect(withoutCredentials('mongodb://user:p@ss/w@db1:27017,db2:27017/lr')).toBe('mongodb://db1:27017,db2:27017/lr')
  })
})
