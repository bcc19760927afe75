import { describe, expect, it } from 'bun:test'
import { register } from 'prom-client'
import { httpDuration } from '@lr/platform/metrics'

/** Each bucket's own count (not cumulative) of one series of lr_http_request_duration_seconds, by its `le`. */
async function bucketsOf(route: string): Promise<Map<string, number>> {
  const text = await register.getSingleMetricAsString('lr_http_request_duration_seconds')
  const own = new Map<string, number>()
  let below = 0
  for (const line of text.split('\n')) {
    const match = /_bucket\{le="([^"]+)",.*route="([^"]+)".*\} (\S+)$/.exec(line)
    if (!match || match[2] !== route) continue
    own.set(match[1]!, Number(match[3]) - below)
    below = Number(match[3])
  }
  return own
}

describe('latency histograms', () => {
  it('spread a resolver\'s redirects of microseconds over several buckets, not all in the first', async () => {
    // Redirects as measured under load: most 2 to 5 µs each, a few slower.
    const redirect = httpDuration.labels({ server: 'resolver', route: '/bucket-test/:code', method: 'GET', status: '302' })
    for (const seconds of [0.000002, 0.000003, 0.000004, 0.000004, 0.000005, 0.000007, 0.000009, 0.00002, 0.00004, 0.0002]) redirect.observe(seconds)
    const buckets = await bucketsOf('/bucket-test/:code')
    const filled = [...buckets].filter(([, n]) => n > 0)
    expect(filled.length).toBeGreaterThanOrEqual(4)
    expect(Math.max(...filled.map(([, n]) => n))).toBeLessThanOrEqual(5)
  })

  it('keep an export of tens of seconds below +Inf', async () => {
    const exported = httpDuration.labels({ server: 'api', route: '/bucket-test/export', method: 'GET', status: '200' })
    for (const seconds of [3, 7, 25, 48]) exported.observe(seconds)
    const buckets = await bucketsOf('/bucket-test/export')
    expect(buckets.get('+Inf')).toBe(0)
    expect([...buckets].filter(([, n]) => n > 0).length).toBe(4)
  })
})
