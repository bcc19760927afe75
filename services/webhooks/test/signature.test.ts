import { describe, expect, it } from 'bun:test'
import { newSecret, sign } from '../src/signature'

describe('Standard Webhooks signature', () => {
  it('matches the spec’s reference vector (svix / standard-webhooks test suite)', () => {
    const signature = sign('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')
  })

  it('draws secrets of 24 random bytes in the whsec_ form', () => {
    const [a, b] = [newSecret(), newSecret()]
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/)
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(24)
    expect(a).not.toBe(b)
  })
})
