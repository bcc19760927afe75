import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { AppError, type Bus } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { personal } from '../fixtures'
import { NOW_MS, resolverSetup, settle } from './fixtures'

let s: ReturnType<typeof resolverSetup>
beforeEach(() => {
  s = resolverSetup()
})
afterEach(() => s.close())

describe('resolver answers', () => {
  it('redirects an active code with 302, its destination and Cache-Control: private, no-store', async () => {
    const code = await s.code('https://example.com/landing?utm=qr')
    const res = await s.scan(`/${code}`)
    expect([res.status, res.headers.get('location'), res.headers.get('cache-control')]).toEqual([302, 'https://example.com/landing?utm=qr', 'private, no-store'])
    expect(await res.text()).toBe('')
  })

  it('answers 404 in plain text for a code never issued', async () => {
    const res = await s.scan('/Unknown1')
    expect([res.status, res.headers.get('content-type'), await res.text()]).toEqual([404, 'text/plain; charset=utf-8', 'Not found: no such short link.\n'])
  })

  it('answers 404 for a draft, like an unknown code', async () => {
    const code = await s.code(undefined, 'draft')
    const res = await s.scan(`/${code}`)
    expect([res.status, res.headers.get('location'), await res.text()]).toEqual([404, null, 'Not found: no such short link.\n'])
  })

  it('answers 410 in plain text for a soft-deleted code', async () => {
    const code = await s.code()
    await s.service.delete(personal, code)
    const res = await s.scan(`/${code}`)
    expect([res.status, res.headers.get('content-type'), await res.text()]).toEqual([410, 'text/plain; charset=utf-8', 'Gone: this short link was deleted.\n'])
  })

  it('redirects HEAD the same way', async () => {
    const code = await s.code()
    const res = await s.scan(`/${code}`, { method: 'HEAD' })
    expect([res.status, res.headers.get('location')]).toEqual([302, 'https://example.com/landing'])
  })

  it('answers 405 to other methods', async () => {
    const code = await s.code()
    const res = await s.scan(`/${code}`, { method: 'POST' })
    expect([res.status, res.headers.get('allow')]).toEqual([405, 'GET, HEAD'])
  })

  it('forwards the scan\'s query string onto the destination', async () => {
    const code = await s.code('https://example.com/landing?utm_source=qr#top')
    const res = await s.scan(`/${code}?utm_source=flyer&utm_campaign=spring&x=a%20b`)
    expect(res.headers.get('location')).toBe('https://example.com/landing?utm_source=qr&utm_campaign=spring&x=a%20b#top')
  })

  it('serves a destination with non-ASCII text as a valid header', async () => {
    const code = await s.code('https://bücher.example/straße?q=ü')
    expect((await s.scan(`/${code}`)).headers.get('location')).toBe('https://xn--bcher-kva.example/stra%C3%9Fe?q=%C3%BC')
  })

  it('redirects a code followed by one trailing slash, its query forwarded, and counts it once', async () => {
    const code = await s.code('https://example.com/landing')
    const res = await s.scan(`/${code}/?utm_source=poster`)
    expect([res.status, res.headers.get('location')]).toEqual([302, 'https://example.com/landing?utm_source=poster'])
    await settle()
    expect(s.scans.map((scan) => scan.code)).toEqual([code])
    const prefixed = resolverSetup({ shortBaseUrl: 'https://s.example/go' })
    const other = await prefixed.code()
    expect((await prefixed.scan(`/go/${other}/`, { base: 'https://s.example' })).status).toBe(302)
    await prefixed.close()
  })

  it('accepts codes under the path of a SHORT_BASE_URL that has one', async () => {
    const prefixed = resolverSetup({ shortBaseUrl: 'https://s.example/go' })
    const code = await prefixed.code()
    expect((await prefixed.scan(`/go/${code}`, { base: 'https://s.example' })).status).toBe(302)
    expect((await prefixed.scan(`/elsewhere/${code}`, { base: 'https://s.example' })).status).toBe(404)
    await prefixed.close()
  })

  const malformed = [
    '/', '/abc', `/${'a'.repeat(33)}`, '/abc-defg', '/abcdefg//', '/abcdefg/more', '/abcdefg..', '/..%2f..%2fetc%2fpasswd',
    '/%2e%2e', '/abc%00defg', '/abc%20defg', '/%E2%82%ACabcdefg', '/analytics', '/Analytics', '/favicon.ico',
  ]
  for (const path of malformed) {
    it(`answers 404 to the malformed path ${path} without asking the service`, async () => {
      const res = await s.scan(path)
      expect([res.status, await res.text()]).toEqual([404, 'Not found: no such short link.\n'])
      expect(s.calls).toEqual({})
    })
  }

  it('serves codes it knows from memory while the dynamic service is unreachable, and 503 for others', async () => {
    let down = false
    const inner = createLocalBus()
    const bus: Bus = {
      ...inner,
      request<T>(subject: string, payload: unknown, opts?: { timeoutMs?: number }) {
        return down ? Promise.reject(new AppError('unavailable', `no service answers ${subject}`)) : inner.request<T>(subject, payload, opts)
      },
    }
    const flaky = resolverSetup({ bus })
    const code = await flaky.code()
    await flaky.scan(`/${code}`)
    down = true
    expect((await flaky.scan(`/${code}`)).status).toBe(302)
    const res = await flaky.scan('/Unknown1')
    expect([res.status, res.headers.get('retry-after'), await res.text()]).toEqual([503, '1', 'Temporarily unavailable, please retry.\n'])
    await flaky.close()
  })
})

describe('resolver memory, after a change event that never came', () => {
  /**
   * A resolver whose clock the test moves, over a bus that loses the change events of the
   * writes made while `lose` is set (a dynamic replica killed between its write and its event),
   * and whose lookups fail while `down` is set.
   */
  async function lossy() {
    const state = { clock: NOW_MS, lose: false, down: false }
    const inner = createLocalBus()
    const bus: Bus = {
      ...inner,
      publish: (subject, event, opts) => (state.lose ? Promise.resolve() : inner.publish(subject, event, opts)),
      request: <T>(subject: string, payload: unknown, opts?: { timeoutMs?: number }) =>
        state.down ? Promise.reject(new AppError('unavailable', `no service answers ${subject}`)) : inner.request<T>(subject, payload, opts),
    }
    const r = resolverSetup({ bus, now: () => state.clock })
    const code = await r.code('https://old.example/')
    const where = async () => {
      const res = await r.scan(`/${code}`)
      return res.status === 302 ? res.headers.get('location') : res.status
    }
    expect(await where()).toBe('https://old.example/')
    state.lose = true
    await r.service.update(personal, code, { destination_url: 'https://new.example/' })
    state.lose = false
    return { r, state, where }
  }

  it('serves its answer for 60 s, re-reads it in the background after, and looks it up before answering once it is older than 120 s', async () => {
    const { r, state, where } = await lossy()
    state.clock += 59_000
    expect([await where(), r.calls.resolve]).toEqual(['https://old.example/', 1])
    // A code scanned rarely: its first scan an hour later was sent to the old destination (only
    // the scans after it got the new one), however long ago the change was made.
    state.clock += 3_600_000
    expect([await where(), r.calls.resolve]).toEqual(['https://new.example/', 2])
    await r.close()
  })

  it('answers as before when that lookup fails (the dynamic service away), rather than 503', async () => {
    const { r, state, where } = await lossy()
    state.clock += 3_600_000
    state.down = true
    expect(await where()).toBe('https://old.example/')
    state.down = false
    await Bun.sleep(1)
    // Re-read in the background from its next scan on.
    expect(await where()).toBe('https://old.example/')
    await Bun.sleep(1)
    expect(await where()).toBe('https://new.example/')
    await r.close()
  })
})

describe('resolver memory', () => {
  it('answers a code it has seen from memory, without asking the service again', async () => {
    const code = await s.code()
    for (let i = 0; i < 5; i++) expect((await s.scan(`/${code}`)).status).toBe(302)
    expect(s.calls.resolve).toBe(1)
  })

  it('answers a code it knows at once, not as a promise: only a lookup waits', async () => {
    const code = await s.code()
    const first = s.scan(`/${code}`)
    expect(first).toBeInstanceOf(Promise)
    expect((await first).status).toBe(302)
    const known = s.scan(`/${code}`)
    expect(known).toBeInstanceOf(Response)
    expect((known as Response).status).toBe(302)
  })

  it('asks the service once for concurrent first scans of one code', async () => {
    const code = await s.code()
    const answers = await Promise.all(Array.from({ length: 20 }, () => s.scan(`/${code}`)))
    expect(answers.every((res) => res.status === 302)).toBe(true)
    expect(s.calls.resolve).toBe(1)
  })

  it('follows a PATCHed destination on the very next scan, from the change event', async () => {
    const code = await s.code('https://old.example/')
    expect((await s.scan(`/${code}`)).headers.get('location')).toBe('https://old.example/')
    await s.service.update(personal, code, { destination_url: 'https://new.example/' })
    await settle()
    expect((await s.scan(`/${code}`)).headers.get('location')).toBe('https://new.example/')
    expect(s.calls.resolve).toBe(1)
  })

  it('answers 404 on the next scan once a code is moved to draft, and 302 again once active', async () => {
    const code = await s.code()
    await s.scan(`/${code}`)
    await s.service.update(personal, code, { status: 'draft' })
    await settle()
    expect((await s.scan(`/${code}`)).status).toBe(404)
    await s.service.update(personal, code, { status: 'active' })
    await settle()
    expect((await s.scan(`/${code}`)).status).toBe(302)
  })

  it('answers 410 on the next scan once a code it has seen is deleted', async () => {
    const code = await s.code()
    await s.scan(`/${code}`)
    await s.service.delete(personal, code)
    await settle()
    expect((await s.scan(`/${code}`)).status).toBe(410)
  })

  it('stops following events once stopped', async () => {
    const code = await s.code('https://old.example/')
    await s.scan(`/${code}`)
    s.resolver.stop()
    const again = await s.scan(`/${code}`)
    expect([again.status, s.calls.resolve]).toEqual([302, 2])
  })
})
