import { afterEach, describe, expect, it, spyOn } from 'bun:test'
import { metricsText } from '@lr/platform/metrics'
import { sample } from '../../../../test/harness/metrics'
import { closeAll, created, start } from './threads-harness'

afterEach(closeAll)

/** This process's count of the resolver's GET 302s, as a scrape writes it (every thread's gathered first). */
async function redirects(): Promise<number> {
  const line = (await metricsText()).split('\n').find((l) => l.startsWith('lr_http_requests_total{') && l.includes('server="resolver"') && l.includes('method="GET"') && l.includes('status="302"'))
  return Number(line?.split(' ').at(-1) ?? 0)
}

describe('resolver threads\' tallies', () => {
  // Each thread is a VM with a heap of its own, which the main thread's memoryUsage() leaves out.
  it('carry each thread\'s heap: lr_thread_heap_used_bytes{thread="resolver-N"}, summed into process_heap_used_bytes', async () => {
    await start({ threads: 2 })
    const text = await metricsText()
    const heap = (thread: string) => sample(text, `lr_thread_heap_used_bytes{thread="${thread}"}`)
    const threads = [heap('resolver-1'), heap('resolver-2')]
    for (const bytes of threads) expect(bytes).toBeGreaterThan(1_000_000)
    // Two readings of the main thread's heap in one scrape: within a few hundred KiB of each other.
    expect(Math.abs(sample(text, 'process_heap_used_bytes')! - (heap('main')! + threads[0]! + threads[1]!))).toBeLessThan(512 * 1024)
  })

  it('count in a later scrape what a thread answered after a scrape stopped waiting for it', async () => {
    const r = await start()
    const code = await created(r)
    const before = await redirects()
    expect((await r.many(code, 30)).every((answer) => answer.status === 302)).toBe(true)
    // The threads hear the scrape's ask 1.5 s late, as a thread stalled for that long would:
    // the scrape goes on without them after 1 s, and their answers come after it.
    const original = Worker.prototype.postMessage
    const late = spyOn(Worker.prototype, 'postMessage').mockImplementation(function (this: Worker, message: unknown, ...rest: unknown[]) {
      if ((message as { t?: string }).t !== 'tallies') return original.call(this, message, ...(rest as []))
      setTimeout(() => original.call(this, message, ...(rest as [])), 1500)
    } as Worker['postMessage'])
    try {
      expect(await redirects()).toBe(before)
    } finally {
      late.mockRestore()
    }
    await Bun.sleep(1000)
    expect(await redirects()).toBe(before + 30)
  }, 15_000)
})
