import { afterEach, describe, expect, it } from 'bun:test'
import type { ResolveReply, ResolverEntry } from '@lr/proto'
import { createScanCounts } from '../../src/resolver/limits'
import { COUNTS_SWEEP_DROPS, createResolver } from '../../src/resolver/resolver'
import { personal } from '../fixtures'
import { BROWSER, KEY, resolverSetup, settle } from './fixtures'

// A capped code's count lives as long as its code's cache entry: the cache is bounded, so are the
// counts. They had stayed until the process stopped, one per capped code ever scanned (about
// 2 MB per 86k codes), however long ago.

const CACHE = 4
let s: ReturnType<typeof resolverSetup>
const counts = createScanCounts()

/** A new capped code of the personal library (the dynamic service gives its lookups `scans: 0`). */
async function capped(max_scans: number): Promise<string> {
  const [record] = (await s.service.create(personal, { destination_url: 'https://offer.example/', name: 'Capped', max_scans, fallback_url: 'https://over.example/' })).created
  await settle()
  return record!.code
}

const where = async (code: string) => {
  const res = await s.scan(`/${code}`)
  return res.status === 302 ? res.headers.get('location') : res.status
}

describe('capped codes\' counts', () => {
  afterEach(async () => {
    await Bun.sleep(5) // the scans handed on before the bus closes
    await s.close()
  })

  it('are let go with their codes once the cache drops them for room', async () => {
    s = resolverSetup({ counts, cache: { maxEntries: CACHE } })
    const codes: string[] = []
    for (let i = 0; i < 3 * CACHE; i++) codes.push(await capped(5))
    for (const code of codes) expect(await where(code)).toBe('https://offer.example/')
    // Every code was counted; only those the cache still holds keep a count.
    expect(counts.size).toBe(CACHE)
    expect(s.calls.resolve).toBe(3 * CACHE)
    // A dropped code's next scan looks it up, and its count comes back with it.
    expect(await where(codes[0]!)).toBe('https://offer.example/')
    expect([s.calls.resolve, counts.size]).toEqual([3 * CACHE + 1, CACHE])
  })

  it('stay exact at the cap for a code scanned while many others fill the cache', async () => {
    s = resolverSetup({ counts, cache: { maxEntries: CACHE } })
    const hot = await capped(3)
    const answers: (string | number | null)[] = []
    for (let i = 0; i < 5; i++) {
      answers.push(await where(hot))
      // As many other codes as the cache holds besides it: first-fill order dropped it each round.
      for (let j = 0; j < CACHE - 1; j++) await where(await capped(5))
    }
    expect(answers).toEqual(['https://offer.example/', 'https://offer.example/', 'https://offer.example/', 'https://over.example/', 'https://over.example/'])
    // Looked up once: the cache kept it (second chance), and with it its count.
    expect([s.calls.resolve, counts.size]).toEqual([1 + 5 * (CACHE - 1), CACHE])
  })
})

describe('a capped code\'s count seeded by a lookup a change event superseded', () => {
  it('is let go at the next sweep of the counts, though no cache entry took it', async () => {
    const RACED = 'Raced001'
    const capped: ResolveReply = { code: RACED, destination_url: 'https://offer.example/', status: 'active', deleted: false, max_scans: 5, scans: 0 }
    let answer: (() => void) | undefined
    let changed: (entry: ResolverEntry) => void = () => undefined
    const own = createScanCounts()
    const resolver = createResolver({
      // Every other code is unknown (a 404, cached like any answer): they fill the cache.
      feed: {
        lookup: (code) => (code === RACED ? new Promise((resolve) => (answer = () => resolve(capped))) : Promise.resolve(null)),
        follow: (listener) => ((changed = listener as typeof changed), () => undefined),
      },
      counts: own,
      cache: { maxEntries: 2 },
      publishScan: () => undefined,
      trustProxy: 0,
      visitorHashKey: KEY,
    })
    const scan = (code: string) => resolver.fetch(new Request(`http://short.test/${code}`, { headers: { 'user-agent': BROWSER } }))
    const scanned = scan(RACED)
    // Its capping event comes while it is looked up: the cache forgets the load under way.
    const { scans: _, ...entry } = capped
    changed(entry)
    answer!()
    expect((await scanned).headers.get('location')).toBe('https://offer.example/')
    expect([own.size, resolver.holds(RACED)]).toEqual([1, false])
    for (let i = 0; i < COUNTS_SWEEP_DROPS + 2; i++) await scan(`Unknown${String(i).padStart(5, '0')}`)
    // Before, it stayed until the process stopped: no drop of a cache entry names it.
    expect(own.size).toBe(0)
    resolver.stop()
  })
})
