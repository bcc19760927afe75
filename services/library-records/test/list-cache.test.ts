import { describe, expect, it } from 'bun:test'
import { createListCache } from '../src/list-cache'

describe('list cache', () => {
  it('answers a kept reply only at the position it was kept at, and forgets it once the position moved', () => {
    const cache = createListCache('test', { entries: 10, budget: 1000 })
    cache.set('a', 5, '[1]')
    expect(cache.get('a', 5)?.text).toBe('[1]')
    expect(cache.get('a', 6)).toBeUndefined()
    expect(cache.get('b', 5)).toBeUndefined()
    cache.set('a', 6, '[1,2]')
    expect([cache.get('a', 5), cache.get('a', 6)?.text]).toEqual([undefined, '[1,2]'])
    expect(cache.size).toEqual({ entries: 1, chars: 5 })
  })

  it('drops the least recently used reply beyond its entries', () => {
    const cache = createListCache('test', { entries: 2, budget: 1000 })
    cache.set('a', 1, 'A')
    cache.set('b', 1, 'B')
    cache.get('a', 1) // a is now the most recently used
    cache.set('c', 1, 'C')
    expect([cache.get('a', 1)?.text, cache.get('b', 1), cache.get('c', 1)?.text]).toEqual(['A', undefined, 'C'])
  })

  it('drops the oldest replies beyond its characters, and keeps none over an eighth of them', () => {
    const cache = createListCache('test', { entries: 100, budget: 80 })
    for (const key of ['a', 'b', 'c', 'd', 'e']) cache.set(key, 1, key.repeat(10))
    expect(cache.size).toEqual({ entries: 5, chars: 50 })
    for (const key of ['f', 'g', 'h', 'i']) cache.set(key, 1, key.repeat(10))
    expect(cache.size).toEqual({ entries: 8, chars: 80 })
    expect(cache.get('a', 1)).toBeUndefined()
    expect(cache.get('b', 1)?.text).toBe('b'.repeat(10))
    cache.set('big', 1, 'x'.repeat(11))
    expect(cache.get('big', 1)).toBeUndefined()
  })
})
