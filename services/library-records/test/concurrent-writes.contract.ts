import { afterEach, beforeEach, expect, it } from 'bun:test'
import type { RecordBase } from '../src/ports'
import { A, type AnyLibraryStore, idOf, type StoreFixture } from './store.fixture'

/**
 * One store opened several times over the same data, each opening with its own connection: the
 * replicas of a service writing one record at once.
 */
export interface ConcurrentWritesHarness<R extends RecordBase> {
  stores: AnyLibraryStore<R>[]
  cleanup(): Promise<void>
}

const REPLICAS = 4
const ROUNDS = 15
const T = 1_800_000_000

/**
 * The compare-and-set promise of LibraryStore.update and delete (docs/decisions.md §4,
 * "Versions"), with the writers on separate connections: of several writes of one version at
 * once exactly one lands, so an If-Match PATCH that lost answers 412, never a 200 whose change
 * another overwrote. Run once per store adapter.
 */
export function concurrentWritesContract<R extends RecordBase>(fixture: StoreFixture<R>, open: (replicas: number) => Promise<ConcurrentWritesHarness<R>>) {
  let h: ConcurrentWritesHarness<R>
  beforeEach(async () => {
    h = await open(REPLICAS)
  })
  afterEach(() => h.cleanup())
  const id = (n: number) => idOf(fixture, fixture.record(n))
  const read = async (n: number) => (await h.stores[0]!.get(A, id(n)))?.record ?? null

  it('lets exactly one of the writes of one version at once land, and keeps that one', async () => {
    for (let n = 1; n <= ROUNDS; n++) {
      await h.stores[0]!.insertMany(A, [fixture.record(n)])
      const { rev } = (await h.stores[0]!.get(A, id(n)))!
      const answers = await Promise.all(h.stores.map((store, w) => store.update(A, id(n), { name: `writer ${w}` }, T, rev)))
      const landed = answers.filter((answer) => answer !== null)
      expect(landed).toHaveLength(1)
      expect(await read(n)).toEqual(landed[0]!)
    }
  })

  it('never brings back a record whose delete was answered while others changed it', async () => {
    for (let n = 1; n <= ROUNDS; n++) {
      await h.stores[0]!.insertMany(A, [fixture.record(n)])
      const [deleted] = await Promise.all([
        h.stores[0]!.delete(A, id(n), T),
        ...h.stores.slice(1).map((store, w) => store.update(A, id(n), { name: `writer ${w}` }, T)),
      ])
      expect(deleted).not.toBeNull()
      expect(await read(n)).toBeNull()
    }
  })
}
