import { describe, expect, it } from 'bun:test'
import { alice, event, UA, visitor } from './fixtures'
import { setup } from './setup'

// Scan events with outcome `fallback` (README "Expiring and capped codes").
describe('fallback scans', () => {
  it('counts them apart from the scans of the code, once each, and never a bot', async () => {
    const { service } = setup()
    const events = [
      event(1, { user_agent: UA.iphone, visitor_id: visitor(1) }),
      event(2, { user_agent: UA.iphone, visitor_id: visitor(2), outcome: 'fallback' }),
      event(3, { user_agent: UA.android, visitor_id: visitor(3), outcome: 'fallback' }),
      event(4, { user_agent: UA.googlebot, visitor_id: visitor(4), outcome: 'fallback' }),
    ]
    expect(await service.ingest(events)).toBe(3)
    expect(await service.ingest(events)).toBe(0)
    expect(await service.breakdown(alice, 'Code0001', {})).toMatchObject({ total_scans: 1, unique_scans: 1, fallback_scans: 2 })
  })

  it('answers the all-time count of counted scans, without fallbacks, for the resolver', async () => {
    const { service } = setup()
    await service.ingest([event(1), event(2), event(3, { outcome: 'fallback' })])
    expect(await service.count('Code0001')).toEqual({ scans: 2 })
    expect(await service.count('Code0404')).toEqual({ scans: 0 })
    expect(await service.count('not a code')).toEqual({ scans: 0 })
  })
})
