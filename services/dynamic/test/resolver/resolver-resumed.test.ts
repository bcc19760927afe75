import { describe, expect, it } from 'bun:test'
import { createLocalBus } from '@lr/platform/bus-local'
import { captureLog } from '@lr/platform/testing/log-capture'
import { AppError, type ResolveReply, type ResolverEntry } from '@lr/proto'
import { createBusFeed } from '../../src/resolver/bus-feed'
import { createResolver, type ResolverFeed } from '../../src/resolver/resolver'
import { BROWSER, KEY, resumable } from './fixtures'

// After its bus reconnected a resolver may have missed change events (a NATS blip, or the server
// cutting it off as a slow consumer): it forgets every cached code, so the next scan of each looks
// it up again, rather than serving a stale answer until its re-read 60 s later.

const CODE = 'Code0001'

/** A feed over a hand-held store of entries: lookups counted, change events never sent (all missed), resumed when the test says. */
function fakeFeed(entry: Omit<ResolverEntry, 'code'>) {
  const store = new Map<string, ResolveReply>([[CODE, { code: CODE, ...entry }]])
  const lookups: string[] = []
  const forgetters = new Set<() => number | Promise<number>>()
  const feed: ResolverFeed = {
    lookup: async (code) => (lookups.push(code), structuredClone(store.get(code) ?? null)),
    follow: () => () => undefined,
    resumed(forget) {
      forgetters.add(forget)
      return () => void forgetters.delete(forget)
    },
  }
  const resume = () => Promise.all([...forgetters].map((forget) => forget()))
  return { feed, store, lookups, forgetters, resume }
}

function resolverOver(feed: ResolverFeed) {
  const resolver = createResolver({ feed, publishScan: () => undefined, trustProxy: 0, visitorHashKey: KEY })
  const scan = async (code = CODE) => {
    const res = await resolver.fetch(new Request(`http://short.test/${code}`, { headers: { 'user-agent': BROWSER } }))
    return res.status === 302 ? res.headers.get('location') : res.status
  }
  return { resolver, scan }
}

describe('a resolver whose feed resumed', () => {
  it('looks a cached code up again at its next scan, and so follows a change it missed', async () => {
    const f = fakeFeed({ destination_url: 'https://old.example/', status: 'active', deleted: false })
    const { resolver, scan } = resolverOver(f.feed)
    expect(await scan()).toBe('https://old.example/')
    f.store.set(CODE, { code: CODE, destination_url: 'https://new.example/', status: 'active', deleted: false })
    // Until then it answers from memory: the change event was missed.
    expect([await scan(), await scan(), f.lookups]).toEqual(['https://old.example/', 'https://old.example/', [CODE]])
    expect(await f.resume()).toEqual([1])
    expect([await scan(), f.lookups]).toEqual(['https://new.example/', [CODE, CODE]])
    // Cached again: no further lookup.
    expect([await scan(), f.lookups.length]).toEqual(['https://new.example/', 2])
    resolver.stop()
  })

  it('keeps a capped code\'s count: a lookup after it that brings a lower count (analytics behind) does not re-open the cap', async () => {
    const capped = { destination_url: 'https://offer.example/', status: 'active' as const, deleted: false, max_scans: 3, fallback_url: 'https://over.example/', scans: 0 }
    const f = fakeFeed(capped)
    const { resolver, scan } = resolverOver(f.feed)
    expect([await scan(), await scan(), await scan(), await scan()]).toEqual(['https://offer.example/', 'https://offer.example/', 'https://offer.example/', 'https://over.example/'])
    await f.resume()
    expect([await scan(), f.lookups.length]).toEqual(['https://over.example/', 2])
    resolver.stop()
  })

  it('answers a forgotten code as before while its lookup fails (the dynamic service not back yet), rather than 503', async () => {
    const f = fakeFeed({ destination_url: 'https://old.example/', status: 'active', deleted: false })
    const { resolver, scan } = resolverOver(f.feed)
    expect(await scan()).toBe('https://old.example/')
    await f.resume()
    f.feed.lookup = async (code) => {
      f.lookups.push(code)
      throw new AppError('unavailable', 'no service answers dynamic.v1.resolve')
    }
    const captured = captureLog()
    try {
      // Looked up, and the answer it had served when that fails.
      expect([await scan(), f.lookups]).toEqual(['https://old.example/', [CODE, CODE]])
      // A code it never held is still a 503, logged: once per 10 s, however many fail meanwhile.
      expect(await scan('Code0002')).toBe(503)
      expect(await scan('Code0003')).toBe(503)
      expect(captured.lines.filter((line) => line.msg === 'resolver lookup failed').map((line) => line.code)).toEqual(['Code0002'])
    } finally {
      captured.restore()
      resolver.stop()
    }
  })

  it('stops listening when stopped', () => {
    const f = fakeFeed({ destination_url: 'https://old.example/', status: 'active', deleted: false })
    const { resolver } = resolverOver(f.feed)
    expect(f.forgetters.size).toBe(1)
    resolver.stop()
    expect(f.forgetters.size).toBe(0)
  })
})

describe('the bus feed', () => {
  it('hears the bus resuming, and logs one info line with how many codes were forgotten', async () => {
    const bus = createLocalBus()
    const resume = resumable(bus)
    const feed = createBusFeed(bus)
    const captured = captureLog()
    try {
      const stop = feed.resumed!(async () => 3)
      resume()
      await Bun.sleep(1)
      stop()
      resume()
      await Bun.sleep(1)
      const lines = captured.lines.filter((line) => line.msg.startsWith('bus reconnected'))
      expect(lines).toEqual([{ codes: 3, msg: 'bus reconnected: cached codes forgotten, each is looked up again at its next scan' }])
    } finally {
      captured.restore()
      await bus.close()
    }
  })

  it('hears nothing over a bus that never disconnects (the in-process one)', () => {
    const bus = createLocalBus()
    expect(bus.resumed).toBeUndefined()
    expect(typeof createBusFeed(bus).resumed!(() => 0)).toBe('function')
  })
})
