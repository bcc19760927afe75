import { describe, expect, it, setSystemTime } from 'bun:test'
import { atMostEvery, dropReport } from '@lr/platform/log-throttle'

describe('lines of a repeating fault', () => {
  it('atMostEvery: the first at once, then one per interval with how many were not written', () => {
    const written: number[] = []
    const throttle = atMostEvery(10_000)
    try {
      for (let i = 0; i < 4; i++) throttle((repeated) => written.push(repeated))
      expect(written).toEqual([0])
      setSystemTime(new Date(Date.now() + 10_001))
      throttle((repeated) => written.push(repeated))
      expect(written).toEqual([0, 3])
    } finally {
      setSystemTime()
    }
  })

  it('dropReport: the first drop of a quiet spell at once, the next ones summed per interval, the rest at flush; the sum is every drop', async () => {
    const lines: number[] = []
    const report = dropReport((count) => lines.push(count), 50)
    report.add(1)
    report.add(2)
    report.add(3)
    expect(lines).toEqual([1])
    await Bun.sleep(80)
    expect(lines).toEqual([1, 5])
    await Bun.sleep(80) // nothing dropped in that interval: the spell is over
    report.add(4)
    expect(lines).toEqual([1, 5, 4])
    report.add(6)
    report.flush()
    expect(lines).toEqual([1, 5, 4, 6])
    await Bun.sleep(80)
    expect(lines).toEqual([1, 5, 4, 6])
  })
})
