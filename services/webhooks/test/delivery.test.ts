import { afterEach, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { deliverOnce, type Delivered } from './deliver-once'

// Names under .test never resolve (RFC 6761): a delivery to hook.test reaches a receiver only if
// the worker connects to the address its own lookup answered, as it must so that the address
// checked is the address connected to (DNS rebinding).
const fixture = (name: string) => join(import.meta.dir, 'fixtures', name)
type Received = { host: string | null; path: string }

let servers: ReturnType<typeof Bun.serve>[] = []
afterEach(() => {
  for (const server of servers) server.stop(true)
  servers = []
})

/** A receiver on 127.0.0.1 that answers 204 and keeps what it was sent. */
function receiver(tls?: Bun.TLSOptions[]): { port: number; received: Received[] } {
  const received: Received[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    ...(tls && { tls }),
    fetch(request) {
      received.push({ host: request.headers.get('host'), path: new URL(request.url).pathname })
      return new Response(null, { status: 204 })
    },
  })
  servers.push(server)
  return { port: server.port!, received }
}

describe('a webhook attempt connects to the addresses it looked up', () => {
  it('sends to the address the lookup answered, with the endpoint’s name as Host, and looks the name up once', async () => {
    const { port, received } = receiver()
    const { attempt, lookups } = await deliverOnce(`http://hook.test:${port}/hook`, ['127.0.0.1'])
    expect(attempt).toMatchObject({ status: 'delivered', http_status: 204, error: null })
    expect(received).toEqual([{ host: `hook.test:${port}`, path: '/hook' }])
    expect(lookups).toEqual(['hook.test'])
  })

  it('moves on to the next address when one refuses the connection', async () => {
    const { port, received } = receiver()
    const { attempt } = await deliverOnce(`http://hook.test:${port}/hook`, ['127.0.0.2', '127.0.0.1'])
    expect(attempt).toMatchObject({ status: 'delivered', http_status: 204 })
    expect(received).toHaveLength(1)
  })

  it('connects to none of them when one is private and WEBHOOKS_ALLOW_PRIVATE is off', async () => {
    const { port, received } = receiver()
    const { attempt } = await deliverOnce(`http://hook.test:${port}/hook`, ['93.184.216.34', '127.0.0.1'], false)
    expect(attempt).toMatchObject({ status: 'failed', http_status: null })
    expect(attempt.error).toContain('WEBHOOKS_ALLOW_PRIVATE=1')
    expect(received).toEqual([])
  })

  it('over TLS, sends the endpoint’s name as SNI and checks the certificate against it', async () => {
    const [hookCert, hookKey, otherCert, otherKey] = await Promise.all(
      ['hook.test.cert.pem', 'hook.test.key.pem', 'other.test.cert.pem', 'other.test.key.pem'].map((name) => Bun.file(fixture(name)).text()),
    )
    // other.test's certificate unless the client names hook.test in its SNI; the client trusts both (trusted.pem).
    const { port, received } = receiver([{ cert: otherCert, key: otherKey }, { cert: hookCert, key: hookKey, serverName: 'hook.test' }])
    const deliver = async (url: string): Promise<Delivered> => {
      const child = Bun.spawn(['bun', join(import.meta.dir, 'deliver-once.ts'), url, '127.0.0.1'], {
        env: { ...Bun.env, NODE_EXTRA_CA_CERTS: fixture('trusted.pem') },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
      if (code !== 0) throw new Error(`deliver-once exited ${code}: ${err}`)
      return JSON.parse(out)
    }
    expect((await deliver(`https://hook.test:${port}/hook`)).attempt).toMatchObject({ status: 'delivered', http_status: 204 })
    expect(received).toEqual([{ host: `hook.test:${port}`, path: '/hook' }])
    // Without the SNI the server would have sent other.test's. A name it has no certificate for
    // gets that one, trusted but for another name: refused, nothing sent.
    const mismatch = (await deliver(`https://elsewhere.test:${port}/hook`)).attempt
    expect(mismatch).toMatchObject({ status: 'failed', http_status: null })
    expect(mismatch.error).toContain('ERR_TLS_CERT_ALTNAME_INVALID')
    expect(received).toHaveLength(1)
  })
})
