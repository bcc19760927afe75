import { describe, expect, it } from 'bun:test'
import { createHmac } from 'node:crypto'
import { scanEventOf } from '../../src/resolver/scan'

const UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148'

describe('scanEventOf', () => {
  it('makes the visitor id HMAC-SHA256(VISITOR_HASH_KEY, address + "\\n" + user agent) in hex, so ids stored before stay the same visitor', () => {
    const request = new Request('http://short.test/abcdEFGH', { headers: { 'user-agent': UA } })
    const event = scanEventOf(request, UA, 'abcdEFGH', '203.0.113.7', 1_700_000_000_000, { visitorHashKey: 'a-secret-key', trustProxy: 0 })
    expect(event.visitor_id).toBe(createHmac('sha256', 'a-secret-key').update(`203.0.113.7\n${UA}`).digest('hex'))
    const anonymous = scanEventOf(new Request('http://short.test/abcdEFGH'), '', 'abcdEFGH', null, 1_700_000_000_000, { visitorHashKey: 'a-secret-key', trustProxy: 0 })
    expect(anonymous.visitor_id).toBe(createHmac('sha256', 'a-secret-key').update('\n').digest('hex'))
    // Another key (the keyed hasher is kept per key), then the first again.
    const other = scanEventOf(request, UA, 'abcdEFGH', '203.0.113.7', 1_700_000_000_000, { visitorHashKey: 'another-secret-key', trustProxy: 0 })
    expect(other.visitor_id).toBe(createHmac('sha256', 'another-secret-key').update(`203.0.113.7\n${UA}`).digest('hex'))
    expect(scanEventOf(request, UA, 'abcdEFGH', '203.0.113.7', 1, { visitorHashKey: 'a-secret-key', trustProxy: 0 }).visitor_id).toBe(event.visitor_id)
  })
})
