import { describe, expect, it } from 'bun:test'
import { currentRequestId, withRequestId } from '@lr/platform/request-context'
import { createTurnBatcher } from '@lr/platform/turn-batch'

/** A batcher whose sends are recorded; `fail` makes the sends of batches holding that item reject. */
function recorded(maxBytes: number, fail?: string) {
  const sends: string[][] = []
  const give = createTurnBatcher<string>(async (items) => {
    sends.push([...items])
    if (fail !== undefined && items.includes(fail)) throw new Error(`could not send ${fail}`)
  }, maxBytes)
  return { sends, give: (item: string) => give({ item, bytes: item.length }) }
}

describe('createTurnBatcher: items of one burst go out together', () => {
  it('sends items handed over in the same turn as one batch, in order, and answers each caller once it is sent', async () => {
    const { sends, give } = recorded(1000)
    const answered: string[] = []
    const all = ['a', 'b', 'c'].map((item) => give(item).then(() => void answered.push(item)))
    expect(sends).toEqual([])
    await Promise.all(all)
    expect(sends).toEqual([['a', 'b', 'c']])
    expect(answered).toEqual(['a', 'b', 'c'])
  })

  it('takes in items handed over by the microtasks already queued (writes answered by one commit), and sends an awaited item alone', async () => {
    const { sends, give } = recorded(1000)
    // Three writes resolved together, each reaching the sink after two awaits of its own.
    await Promise.all(['x', 'y', 'z'].map(async (item) => {
      await null
      await null
      await give(item)
    }))
    await give('alone')
    await give('after')
    expect(sends).toEqual([['x', 'y', 'z'], ['alone'], ['after']])
  })

  it('starts a new batch before the byte limit would be passed (one byte per item for its comma), and sends an item above the limit alone', async () => {
    const { sends, give } = recorded(10)
    // 1 + (3 + 1) + (3 + 1) = 9 fits; a third would make 13.
    await Promise.all(['aaa', 'bbb', 'ccc', 'dddddddddddddddd', 'e'].map(give))
    expect(sends).toEqual([['aaa', 'bbb'], ['ccc'], ['dddddddddddddddd'], ['e']])
  })

  it('rejects every caller of a batch whose send failed, and no caller of another batch', async () => {
    const { sends, give } = recorded(9, 'bad')
    const outcomes = await Promise.allSettled(['ok1', 'bad', 'ok2', 'ok3'].map(give))
    expect(sends).toEqual([['ok1', 'bad'], ['ok2', 'ok3']])
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'fulfilled', 'fulfilled'])
    expect((outcomes[0] as PromiseRejectedResult).reason.message).toBe('could not send bad')
  })

  it("sends a batch as part of its items' request when they share one, and as part of none when they do not, each caller waiting in its own", async () => {
    const sentUnder: (string | undefined)[] = []
    const give = createTurnBatcher<string>(async () => void sentUnder.push(currentRequestId()), 1000)
    const waitedUnder: (string | undefined)[] = []
    const gave = (requestId: string | undefined, item: string) =>
      withRequestId(requestId, () => give({ item, bytes: 1 }).then(() => void waitedUnder.push(currentRequestId())))
    await gave('r1', 'a')
    await withRequestId('r2', () => Promise.all([give({ item: 'b', bytes: 1 }), give({ item: 'c', bytes: 1 })]))
    await Promise.all([gave('r3', 'd'), gave('r4', 'e')])
    await Promise.all([gave(undefined, 'f'), gave('r5', 'g')])
    await Promise.all([gave('r6', 'h'), gave(undefined, 'i')])
    expect(sentUnder).toEqual(['r1', 'r2', undefined, undefined, undefined])
    expect(waitedUnder).toEqual(['r1', 'r3', 'r4', undefined, 'r5', 'r6', undefined])
  })
})
