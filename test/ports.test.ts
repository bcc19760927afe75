import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { freePort } from './harness/ports'

describe('freePort', () => {
  it('hands out distinct bindable ports below the range the kernel gives outgoing connections', async () => {
    const ports = await Promise.all(Array.from({ length: 50 }, freePort))
    expect(new Set(ports).size).toBe(50)
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    for (const port of ports) expect(port).toBeLessThan(low)
    const server = Bun.serve({ port: ports[0], hostname: '127.0.0.1', fetch: () => new Response('ok') })
    expect(await (await fetch(`http://127.0.0.1:${ports[0]}`)).text()).toBe('ok')
    server.stop(true)
  })
})
