import { describe, expect, it } from 'bun:test'
import { AppError } from '@lr/proto'
import { checkIdempotencyKey, fingerprintOf, idempotent } from '@lr/platform/idempotency'
import { type Receipt, ReceiptTaken } from '@lr/proto'

/** A receipt store in a Map, honouring the ReceiptTaken rule like the real adapters. */
function memoryReceipts() {
  const receipts = new Map<string, Receipt>()
  return {
    receipts,
    async findReceipt(scope: string, key: string, since: number) {
      const r = receipts.get(`${scope}/${key}`)
      return r && r.created_at >= since ? r : null
    },
    write(receipt: Receipt) {
      if (receipts.has(`${receipt.scope}/${receipt.key}`)) throw new ReceiptTaken()
      receipts.set(`${receipt.scope}/${receipt.key}`, receipt)
    },
  }
}

const request = (over: Partial<Parameters<typeof idempotent>[1]> = {}) => ({ scope: 'key_1', key: 'k1' as string | undefined, route: 'records.create', body: { a: 1, b: [1, 2] }, now: 1000, ...over })

describe('fingerprintOf', () => {
  it('ignores the order of object keys', () => {
    expect(fingerprintOf('r', { a: 1, b: { c: 2, d: 3 } })).toBe(fingerprintOf('r', { b: { d: 3, c: 2 }, a: 1 }))
  })

  it('differs for another body, another array order or another route', () => {
    const base = fingerprintOf('r', { a: [1, 2] })
    expect(fingerprintOf('r', { a: [2, 1] })).not.toBe(base)
    expect(fingerprintOf('r', { a: [1, 2, 3] })).not.toBe(base)
    expect(fingerprintOf('s', { a: [1, 2] })).not.toBe(base)
  })
})

describe('checkIdempotencyKey', () => {
  it('accepts visible ASCII up to 255 characters and no key at all', () => {
    expect(checkIdempotencyKey('order-42:retry')).toBe('order-42:retry')
    expect(checkIdempotencyKey('x'.repeat(255))).toHaveLength(255)
    expect(checkIdempotencyKey(undefined)).toBeUndefined()
  })

  it('rejects an empty, too long or non-ASCII key with a 400', () => {
    for (const key of ['', 'x'.repeat(256), 'with space', 'ключ']) {
      expect(() => checkIdempotencyKey(key)).toThrow(AppError)
      try { checkIdempotencyKey(key) } catch (e) { expect((e as AppError).status).toBe(400) }
    }
  })
})

describe('idempotent', () => {
  it('runs the create once and replays its answer for the same key and body', async () => {
    const store = memoryReceipts()
    let runs = 0
    const create = async (receiptFor?: (r: unknown) => Receipt) => {
      const response = { created: [++runs] }
      store.write(receiptFor!(response))
      return response
    }
    expect(await idempotent(store, request(), create)).toEqual({ created: [1] })
    expect(await idempotent(store, request({ body: { b: [1, 2], a: 1 } }), create)).toEqual({ created: [1] })
    expect(runs).toBe(1)
  })

  it('answers 422 when the key comes back with another body', async () => {
    const store = memoryReceipts()
    await idempotent(store, request(), async (receiptFor) => (store.write(receiptFor!({ ok: 1 })), { ok: 1 }))
    const error = await idempotent(store, request({ body: { a: 2 } }), async () => ({})).catch((e) => e)
    expect([error.status, error.message]).toEqual([422, 'this Idempotency-Key was already used with a different request'])
  })

  it('runs the create every time without a key', async () => {
    const store = memoryReceipts()
    let runs = 0
    for (let i = 0; i < 3; i++) await idempotent(store, request({ key: undefined }), async (receiptFor) => (expect(receiptFor).toBeUndefined(), ++runs))
    expect(runs).toBe(3)
  })

  it('replays the twin\'s answer when a concurrent request stored its receipt first', async () => {
    const store = memoryReceipts()
    const twin = { scope: 'key_1', key: 'k1', fingerprint: fingerprintOf('records.create', request().body), response: { created: ['twin'] }, created_at: 1000 }
    // The twin commits between our lookup and our write.
    const result = await idempotent(store, request(), async (receiptFor) => {
      store.receipts.set('key_1/k1', twin)
      store.write(receiptFor!({ created: ['mine'] }))
      return { created: ['mine'] }
    })
    expect(result).toEqual({ created: ['twin'] })
  })

  it('replays the twin\'s answer when the write fails on the state the twin left (a review: nothing pending any more)', async () => {
    const store = memoryReceipts()
    const body = { decision: 'approve' }
    const twin = { scope: 'key_1', key: 'k1', fingerprint: fingerprintOf('dynamic.review', body), response: { code: 'abc' }, created_at: 1000 }
    const result = await idempotent<unknown>(store, request({ route: 'dynamic.review', body }), async () => {
      store.receipts.set('key_1/k1', twin) // the twin commits its review between our lookup and our read
      throw new AppError('conflict', 'this code has no pending change to review')
    })
    expect(result).toEqual({ code: 'abc' })
  })

  it('passes the write\'s own error on when no twin answered (and when the receipts cannot be read either)', async () => {
    const store = memoryReceipts()
    const conflict = new AppError('conflict', 'this code has no pending change to review')
    expect(await idempotent(store, request(), async () => { throw conflict }).catch((e) => e)).toBe(conflict)
    const down = { findReceipt: async () => { throw new Error('store away') } }
    let first = true
    const failing = { findReceipt: async (...args: [string, string, number]) => (first ? ((first = false), store.findReceipt(...args)) : down.findReceipt()) }
    expect(await idempotent(failing, request(), async () => { throw conflict }).catch((e) => e)).toBe(conflict)
  })

  it('runs `checks` only when no earlier answer replays, before the key is claimed: a refusal holds no key', async () => {
    const store = memoryReceipts()
    const claimed: string[] = []
    const claims = { claim: async (_scope: string, key: string, fingerprint: string) => (claimed.push(key), fingerprint) }
    let checked = 0
    const refuse = async () => {
      checked++
      throw new AppError('bad_request', 'refused')
    }
    expect((await idempotent(store, request({ checks: refuse }), async () => 'never', claims).catch((e) => e)).status).toBe(400)
    expect([checked, claimed]).toEqual([1, []])
    await idempotent(store, request(), async (receiptFor) => (store.write(receiptFor!('first')), 'first'), claims)
    expect(await idempotent(store, request({ checks: refuse }), async () => 'again', claims)).toBe('first')
    expect(checked).toBe(1) // the retry was answered without them
  })

  it('runs again once the receipt is older than a day', async () => {
    const store = memoryReceipts()
    await idempotent(store, request({ now: 1000 }), async (receiptFor) => (store.write(receiptFor!('first')), 'first'))
    store.receipts.clear() // as the adapters replace an expired receipt
    expect(await idempotent(store, request({ now: 1000 + 86_401 }), async (receiptFor) => (store.write(receiptFor!('second')), 'second'))).toBe('second')
  })
})
