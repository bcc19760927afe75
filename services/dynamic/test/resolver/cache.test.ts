import { destinationOf } from '../../src/resolver/location'
import { describe, expect, it } from 'bun:test'
import type { ResolveReply, ResolverEntry } from '@lr/proto'
import { createTargetCache, targetOf } from '../../src/resolver/cache'

const entry = (code: string, over: Partial<ResolverEntry> = {}): ResolverEntry =>
  ({ code, destination_url: `https://example.com/${code}`, status: 'active', deleted: false, ...over })

/** A loader that answers from `answers` and counts its calls; `hold` keeps answers back until released. */
function loader(answers: Record<string, ResolveReply> = {}) {
  const calls: string[] = []
  const held: (() => void)[] = []
  let hold = false
  const load = (code: string) => {
    calls.push(code)
    const answer = () => answers[code] ?? null
    return hold ? new Promise<ResolveReply>((resolve) => held.push(() => resolve(answer()))) : Promise.resolve(answer())
  }
  return { load, calls, answers, holdAnswers: () => void (hold = true), release: () => held.splice(0).forEach((go) => go()) }
}

describe('targetOf', () => {
  it('maps active to 302, draft and unknown to 404, deleted to 410', () => {
    expect(targetOf(entry('Active01'))).toEqual({ status: 302, destination: destinationOf('https://example.com/Active01') })
    expect(targetOf(entry('Draft001', { status: 'draft' }))).toEqual({ status: 404 })
    expect(targetOf(null)).toEqual({ status: 404 })
    expect(targetOf(entry('Gone0001', { deleted: true }))).toEqual({ status: 410 })
  })
})

describe('target cache', () => {
  it('loads a code once and answers it from memory afterwards', async () => {
    const l = loader({ Code0001: entry('Code0001') })
    const cache = createTargetCache(l.load)
    expect(await cache.lookup('Code0001')).toEqual({ status: 302, destination: destinationOf('https://example.com/Code0001') })
    expect(cache.lookup('Code0001')).toEqual({ status: 302, destination: destinationOf('https://example.com/Code0001') })
    expect(l.calls).toEqual(['Code0001'])
  })

  it('remembers a code never issued, so repeated probes do not reach the service', async () => {
    const l = loader()
    const cache = createTargetCache(l.load)
    await cache.lookup('Nothing1')
    expect(cache.lookup('Nothing1')).toEqual({ status: 404 })
    expect(l.calls).toHaveLength(1)
  })

  it('lets a change event win over a load that was under way when it arrived', async () => {
    const l = loader({ Code0001: entry('Code0001', { destination_url: 'https://old.example/' }) })
    const cache = createTargetCache(l.load)
    l.holdAnswers()
    const pending = cache.lookup('Code0001')
    cache.apply(entry('Code0001', { destination_url: 'https://new.example/' }))
    l.release()
    expect(await pending).toEqual({ status: 302, destination: destinationOf('https://new.example/') })
    expect(cache.lookup('Code0001')).toEqual({ status: 302, destination: destinationOf('https://new.example/') })
  })

  it('ignores events for codes it does not hold, so creations do not fill it', () => {
    const cache = createTargetCache(loader().load)
    cache.apply(entry('Code0001'))
    expect(cache.size).toBe(0)
  })

  it('turns a remembered 404 into a redirect when the code is created', async () => {
    const cache = createTargetCache(loader().load)
    await cache.lookup('Code0001')
    cache.apply(entry('Code0001'))
    expect(cache.lookup('Code0001')).toEqual({ status: 302, destination: destinationOf('https://example.com/Code0001') })
  })

  it('keeps at most maxEntries codes, dropping the oldest filled when none was scanned again', async () => {
    const l = loader()
    const cache = createTargetCache(l.load, { maxEntries: 2 })
    for (const code of ['Code0001', 'Code0002', 'Code0003']) await cache.lookup(code)
    expect(cache.size).toBe(2)
    await cache.lookup('Code0001')
    expect(l.calls).toEqual(['Code0001', 'Code0002', 'Code0003', 'Code0001'])
  })

  it('keeps a code scanned between fills while codes never scanned again are dropped (second chance)', async () => {
    const l = loader()
    const gone: string[] = []
    const cache = createTargetCache(l.load, { maxEntries: 3, dropped: (code) => gone.push(code) })
    await cache.lookup('HotCode1')
    const cold = Array.from({ length: 10 }, (_, i) => `ColdCod${i}`)
    for (const code of cold) {
      expect(cache.lookup('HotCode1')).toEqual({ status: 404 })
      await cache.lookup(code)
    }
    // First-fill order had dropped the hot code at the third fill and loaded it again every third scan.
    expect(l.calls.filter((code) => code === 'HotCode1')).toHaveLength(1)
    expect([cache.size, gone]).toEqual([3, cold.slice(0, 8)])
    await cache.lookup('ColdCod0')
    expect(l.calls.filter((code) => code === 'ColdCod0')).toHaveLength(2)
  })

  it('serves an old answer from memory while re-reading it in the background', async () => {
    let clock = 0
    const l = loader({ Code0001: entry('Code0001', { destination_url: 'https://old.example/' }) })
    const cache = createTargetCache(l.load, { refreshMs: 1000, now: () => clock })
    await cache.lookup('Code0001')
    l.answers.Code0001 = entry('Code0001', { destination_url: 'https://new.example/' })
    clock = 1001
    expect(cache.lookup('Code0001')).toEqual({ status: 302, destination: destinationOf('https://old.example/') })
    await Bun.sleep(0)
    expect(cache.lookup('Code0001')).toEqual({ status: 302, destination: destinationOf('https://new.example/') })
    expect(l.calls).toHaveLength(2)
  })

  it('does not remember a failed load, so the next scan tries again', async () => {
    let fail = true
    const cache = createTargetCache(async () => {
      if (fail) throw new Error('down')
      return entry('Code0001')
    })
    expect(await Promise.resolve(cache.lookup('Code0001')).catch((e: Error) => e.message)).toBe('down')
    fail = false
    expect(await cache.lookup('Code0001')).toEqual({ status: 302, destination: destinationOf('https://example.com/Code0001') })
  })
})

describe('target cache, forgetAll (the bus reconnected: change events may have been missed)', () => {
  const to = (url: string) => ({ status: 302 as const, destination: destinationOf(url) })

  it('loads every code it held again at its next lookup, and answers how many it held', async () => {
    const l = loader({ Code0001: entry('Code0001', { destination_url: 'https://old.example/' }), Code0002: entry('Code0002') })
    const cache = createTargetCache(l.load)
    for (const code of ['Code0001', 'Code0002']) await cache.lookup(code)
    l.answers.Code0001 = entry('Code0001', { destination_url: 'https://new.example/' })
    expect(cache.forgetAll()).toBe(2)
    expect([cache.size, cache.forgetAll()]).toEqual([0, 0])
    expect(await cache.lookup('Code0001')).toEqual(to('https://new.example/'))
    expect(cache.lookup('Code0001')).toEqual(to('https://new.example/'))
    expect(l.calls).toEqual(['Code0001', 'Code0002', 'Code0001'])
  })

  it('serves a forgotten code\'s last answer while its load fails, and tries again in the background from its next lookup on', async () => {
    let fail = false
    const l = loader({ Code0001: entry('Code0001', { destination_url: 'https://old.example/' }) })
    const cache = createTargetCache((code) => (fail ? Promise.reject(new Error('down')) : l.load(code)))
    await cache.lookup('Code0001')
    cache.forgetAll()
    fail = true
    expect(await cache.lookup('Code0001')).toEqual(to('https://old.example/'))
    l.answers.Code0001 = entry('Code0001', { destination_url: 'https://new.example/' })
    fail = false
    expect(cache.lookup('Code0001')).toEqual(to('https://old.example/'))
    await Bun.sleep(0)
    expect(cache.lookup('Code0001')).toEqual(to('https://new.example/'))
    // A code it never held still fails.
    fail = true
    expect(await Promise.resolve(cache.lookup('Code0002')).catch((e: Error) => e.message)).toBe('down')
  })

  it('takes a change event for a forgotten code as its answer, without a load', async () => {
    const l = loader({ Code0001: entry('Code0001') })
    const cache = createTargetCache(l.load)
    await cache.lookup('Code0001')
    cache.forgetAll()
    cache.apply(entry('Code0001', { destination_url: 'https://new.example/' }))
    expect(cache.lookup('Code0001')).toEqual(to('https://new.example/'))
    expect(l.calls).toEqual(['Code0001'])
  })

  it('keeps forgotten answers within maxEntries, dropping them before any code loaded since', async () => {
    const l = loader()
    const cache = createTargetCache(l.load, { maxEntries: 2 })
    for (const code of ['Code0001', 'Code0002']) await cache.lookup(code)
    cache.forgetAll()
    for (const code of ['Code0003', 'Code0004']) await cache.lookup(code)
    expect(cache.forgetAll()).toBe(2)
  })
})
