import { describe, expect, it } from 'bun:test'
import { Counter, Histogram, Registry, register } from 'prom-client'
import { addTallies, TallyCounter, TallyHistogram, takeTallies } from '@lr/platform/tally'
// Registers the tallies with prom-client's default registry, as every process's metrics do.
import '@lr/platform/metrics'

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

  it('keeps label sets apart whatever their values hold, and counts a tally with no labels', async () => {
    const name = `tally_test_total_${n++}`
    const theirs = new Registry()
    const reference = new Counter({ name, help: 'c', labelNames: ['a', 'b'] as const, registers: [theirs] })
    const ours = new TallyCounter(name, 'c', ['a', 'b'])
    // Joined into one key with a separator, these two would be one series.
    for (const labels of [{ a: 'x\u0001y', b: 'z' }, { a: 'x', b: 'y\u0001z' }, { a: 'x', b: 'y\u0001z' }, { a: '', b: '' }]) {
      ours.inc(labels)
      reference.inc(labels)
    }
    expect(await register.getSingleMetricAsString(name)).toBe(await theirs.getSingleMetricAsString(name))
    const bare = new TallyCounter(`tally_test_total_${n++}`, 'c', [])
    bare.inc({})
    bare.labels({}).inc(2)
    expect(await register.getSingleMetricAsString(bare.name)).toBe(`# HELP ${bare.name} c\n# TYPE ${bare.name} counter\n${bare.name} 3`)
  })

  it('forgets every series on reset, as prom-client does', async () => {
    const name = `tally_test_total_${n++}`
    const ours = new TallyCounter(name, 'c', ['a'])
    ours.inc({ a: 'x' })
    ours.reset()
    expect(await register.getSingleMetricAsString(name)).toBe(`# HELP ${name} c\n# TYPE ${name} counter`)
  })

  it('hand what a thread counted to another as data: taken once (the series start again from zero), added up where scraped', async () => {
    const counterName = `tally_test_taken_total_${n++}`
    const histogramName = `tally_test_taken_seconds_${n++}`
    const theirs = new Registry()
    const counterReference = new Counter({ name: counterName, help: 'c', labelNames: ['status'] as const, registers: [theirs] })
    const histogramReference = new Histogram({ name: histogramName, help: 'h', labelNames: ['status'] as const, buckets: BOUNDS, registers: [theirs] })
    const counter = new TallyCounter(counterName, 'c', ['status'])
    const histogram = new TallyHistogram(histogramName, 'h', ['status'], BOUNDS)
    const kept = counter.labels({ status: '302' })
    kept.inc()
    counter.inc({ status: '404' }, 2)
    histogram.observe({ status: '302' }, 0.003)
    histogram.observe({ status: '302' }, 0.2)
    const taken = takeTallies()
    // What was taken is gone here, and a handle kept before still counts into its series.
    expect(taken[counterName]).toEqual([{ labels: { status: '302' }, value: 1 }, { labels: { status: '404' }, value: 2 }])
    expect(takeTallies()[counterName]).toBeUndefined()
    kept.inc()
    // Added back twice (two threads that counted the same), beside what was counted since.
    addTallies(taken)
    addTallies({ [counterName]: taken[counterName]!, [histogramName]: taken[histogramName]!, no_such_tally: [{ labels: {}, value: 1 }] })
    counterReference.inc({ status: '302' }, 3)
    counterReference.inc({ status: '404' }, 4)
    for (const value of [0.003, 0.2, 0.003, 0.2]) histogramReference.observe({ status: '302' }, value)
    expect(await register.getSingleMetricAsString(counterName)).toBe(await theirs.getSingleMetricAsString(counterName))
    expect(await register.getSingleMetricAsString(histogramName)).toBe(await theirs.getSingleMetricAsString(histogramName))
  })
})
