import { describe, expect, it } from 'bun:test'
import { Counter, Histogram, Registry, register } from 'prom-client'
import { TallyCounter, TallyHistogram } from '@lr/platform/tally'

// Each tally beside prom-client's own metric of the same name in a registry of its own: the
// scrape text must be the same for the same updates.
const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
let n = 0

describe('tallies', () => {
  it('write a histogram as prom-client writes it: cumulative buckets (a value on a bound in it), +Inf, sum, count per label set', async () => {
    const name = `tally_test_seconds_${n++}`
    const theirs = new Registry()
    const reference = new Histogram({ name, help: 'h', labelNames: ['route', 'status'] as const, buckets: BOUNDS, registers: [theirs] })
    const ours = new TallyHistogram(name, 'h', ['route', 'status'], BOUNDS)
    const kept = ours.labels({ route: '/:code', status: '302' })
    const keptReference = reference.labels({ route: '/:code', status: '302' })
    const values = [0, 0.0005, 0.0007, 0.001, 0.003, 0.2, 1, 9.99, 10, 11, 120]
    for (const [i, value] of values.entries()) {
      kept.observe(value / 3)
      keptReference.observe(value / 3)
      ours.observe({ route: '/v1/qrcodes', status: i % 2 ? '200' : '404' }, value)
      reference.observe({ route: '/v1/qrcodes', status: i % 2 ? '200' : '404' }, value)
    }
    expect(await register.getSingleMetricAsString(name)).toBe(await theirs.getSingleMetricAsString(name))
    expect(await register.getSingleMetricAsString(name)).toContain(`${name}_bucket{le="0.001",route="/v1/qrcodes",status="200"} 2`)
  })

  it('write a counter as prom-client writes it, by label set, counted by one or by n', async () => {
    const name = `tally_test_total_${n++}`
    const theirs = new Registry()
    const reference = new Counter({ name, help: 'c', labelNames: ['server', 'status'] as const, registers: [theirs] })
    const ours = new TallyCounter(name, 'c', ['server', 'status'])
    // The caller's object may be reused for other values: the series keeps its own copy (prom-client
    // keeps the caller's, so it is given a fresh one each time).
    const labels = { server: 'api', status: '200' }
    for (let i = 0; i < 5; i++) {
      ours.inc(labels)
      reference.inc({ ...labels })
    }
    labels.status = '429'
    ours.inc(labels, 3)
    reference.inc({ ...labels }, 3)
    ours.labels({ server: 'resolver', status: '302' }).inc()
    reference.labels({ server: 'resolver', status: '302' }).inc()
    expect(await register.getSingleMetricAsString(name)).toBe(await theirs.getSingleMetricAsString(name))
    expect(await register.getSingleMetricAsString(name)).toContain(`${name}{server="api",status="200"} 5`)
  })

  it('forgets every series on reset, as prom-client does', async () => {
    const name = `tally_test_total_${n++}`
    const ours = new TallyCounter(name, 'c', ['a'])
    ours.inc({ a: 'x' })
    ours.reset()
    expect(await register.getSingleMetricAsString(name)).toBe(`# HELP ${name} c\n# TYPE ${name} counter`)
  })
})
