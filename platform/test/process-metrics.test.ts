import { describe, expect, it } from 'bun:test'
import { register } from 'prom-client'
import '@lr/platform/metrics'

describe('the process metrics', () => {
  it('types process_cpu_seconds_total as a counter that grows, the other process figures as gauges', async () => {
    const first = await register.metrics()
    expect(first).toContain('# TYPE process_cpu_seconds_total counter')
    for (const gauge of ['process_resident_memory_bytes', 'process_heap_used_bytes', 'process_start_time_seconds']) expect(first).toContain(`# TYPE ${gauge} gauge`)
    const cpu = (text: string) => Number(/^process_cpu_seconds_total (\S+)$/m.exec(text)![1])
    const before = cpu(first)
    let spin = 0
    for (const end = performance.now() + 30; performance.now() < end; ) spin++
    expect(spin).toBeGreaterThan(0)
    expect(cpu(await register.metrics())).toBeGreaterThan(before)
  })
})
