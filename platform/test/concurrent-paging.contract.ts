import { afterEach, beforeEach, expect, it } from 'bun:test'

/**
 * One store opened several times over the same data, each opening with its own connection: the
 * writers stand for replicas of a service, the reader for a client paging through a list.
 */
export interface ConcurrentPagingHarness {
  /** Inserts records numbered `ns` as one batch through writer `writer`. */
  insert(writer: number, ns: number[]): Promise<unknown>
  /** The ids of records numbered `ns`, as `page` reports them. */
  idsOf(ns: number[]): string[]
  /** One page of the list, read through the reader's connection. */
  page(after: string | undefined, limit: number): Promise<{ ids: string[]; next: string | null }>
  cleanup(): Promise<void>
}

const WRITERS = 4
const BATCHES = 12
const LIMIT = 4

/**
 * The paging promise of the list ports, under concurrent inserts: a reader walking the pages
 * while several writers insert sees every record exactly once, in position order, and a page
 * once read never gains a record before the ones it showed. Run once per store adapter.
 */
export function concurrentPagingContract(open: (writers: number) => Promise<ConcurrentPagingHarness>) {
  let h: ConcurrentPagingHarness
  beforeEach(async () => {
    h = await open(WRITERS)
  })
  afterEach(() => h.cleanup())

  it('shows every record inserted by concurrent writers exactly once, in position order, to a reader paging meanwhile', async () => {
    const inserted: number[] = []
    let writing = true
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      for (let b = 0; b < BATCHES; b++) {
        const ns = Array.from({ length: 1 + ((w + b) % 3) }, (_, i) => 1000 * (w + 1) + 10 * b + i)
        await h.insert(w, ns)
        inserted.push(...ns)
        await Bun.sleep(Math.random() * 3)
      }
    })
    const done = Promise.all(writers).finally(() => {
      writing = false
    })

    const seen: string[] = []
    try {
      let after: string | undefined
      let shown: string[] = [] // what the page after `after` showed when it was the last page
      for (;;) {
        const finished = !writing // read before the page, so the last read follows every insert
        const page = await h.page(after, LIMIT)
        expect(page.ids.slice(0, shown.length)).toEqual(shown)
        seen.push(...page.ids.slice(shown.length))
        if (page.next !== null) {
          after = page.next
          shown = []
        } else {
          if (finished) break
          shown = page.ids
          await Bun.sleep(1)
        }
      }
    } finally {
      await done // the writers' connections must not be closed under them
    }

    expect(seen.length).toBe(new Set(seen).size)
    expect([...seen].sort()).toEqual(h.idsOf(inserted).sort())
    const walk: string[] = []
    let next: string | null | undefined
    do {
      const page = await h.page(next ?? undefined, 50)
      walk.push(...page.ids)
      next = page.next
    } while (next !== null)
    expect(seen).toEqual(walk)
  })
}
