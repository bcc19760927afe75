import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { AppError, type Bus } from '@lr/proto'
import { JsonText } from '@lr/platform/bus-handler'
import { currentDeadline, currentRequestId, withRequestId } from '@lr/platform/request-context'

/** The AppError a request rejects with; fails the test if the request succeeds. */
const failure = (request: Promise<unknown>) =>
  request.then(
    (data) => { throw new Error(`expected a failure, got ${JSON.stringify(data)}`) },
    (error: AppError) => error,
  )

/** The maxPayload the contract's buses are built with: small, so a test can cross it. */
export const CONTRACT_MAX_PAYLOAD = 64 * 1024

class Stamp {
  toJSON() {
    return 'stamped'
  }
}
/** Replies of one level of values, some of which JSON changes on the way; t.v1.flat answers each by name. */
const flatReplies: Record<string, unknown> = {
  csv: { csv: 'id,"name"\r\n1,"a ""b"" ✓"\r\n', next_cursor: null, rows: 2, done: false },
  changed: { zero: -0, nan: Number.NaN, inf: Number.POSITIVE_INFINITY, gone: undefined, date: new Date(0), stamp: new Stamp(), [Symbol('s')]: 1 },
  instance: Object.assign(new Stamp(), { a: 1 }),
  // Under the limit as characters, over it as JSON text: every control character is a 6-byte escape.
  escapes: { csv: '\u0001'.repeat(Math.floor(CONTRACT_MAX_PAYLOAD / 5)) },
  quotes: { csv: '"'.repeat(CONTRACT_MAX_PAYLOAD / 2) },
}

/** The behaviour every Bus adapter must share; `connect` makes clients on one transport, each with maxPayload CONTRACT_MAX_PAYLOAD. */
export function busContract(name: string, setup: () => Promise<{ connect(): Promise<Bus>; teardown(): Promise<void> }>) {
  describe(`Bus contract: ${name}`, () => {
    let env: Awaited<ReturnType<typeof setup>>
    let client: Bus
    let server: Bus
    let replica: Bus
    /** How often t.v1.deadline ran. */
    let deadlineRuns = 0
    /** What t.v1.ask's own request came to, by the test's token. */
    const asked = new Map<string, (outcome: { data?: unknown; code?: string; waitedMs: number }) => void>()
    const askedFor = (token: string) => new Promise<{ data?: unknown; code?: string; waitedMs: number }>((resolve) => asked.set(token, resolve))

    beforeAll(async () => {
      env = await setup()
      ;[client, server, replica] = await Promise.all([env.connect(), env.connect(), env.connect()])
      server.serve('t.v1.echo', async (p) => ({ echoed: p }), { queue: 't' })
      server.serve('t.v1.fail', async () => { throw new AppError('not_found', 'no such thing') }, { queue: 't' })
      server.serve('t.v1.crash', async () => { throw new Error('database password is hunter2') }, { queue: 't' })
      server.serve('t.v1.slow', async () => Bun.sleep(300).then(() => 'late'), { queue: 't' })
      server.serve('t.v1.who', async () => 'server', { queue: 't' })
      replica.serve('t.v1.who', async () => 'replica', { queue: 't' })
      server.serve('t.v1.request-id', async () => ({ requestId: currentRequestId() ?? null }), { queue: 't' })
      server.serve('t.v1.big', async (p) => 'x'.repeat((p as { size: number }).size), { queue: 't' })
      server.serve('t.v1.flat', async (p) => flatReplies[(p as { kind: string }).kind], { queue: 't' })
      server.serve('t.v1.text', async (p) => {
        const { text, size = 0 } = p as { text?: string; size?: number }
        return new JsonText(text ?? JSON.stringify('x'.repeat(size)))
      }, { queue: 't' })
      server.serve('t.v1.mutate', async (p) => { (p as { list: number[] }).list.push(2); return p }, { queue: 't' })
      server.serve('t.v1.deadline', async () => {
        deadlineRuns++
        return currentDeadline() ?? null
      }, { queue: 't' })
      // Asks `subject` itself after `afterMs`, and tells the test how that went: its own caller may have given up by then.
      server.serve('t.v1.ask', async (p) => {
        const { token, subject, afterMs } = p as { token: string; subject: string; afterMs: number }
        await Bun.sleep(afterMs)
        const started = performance.now()
        const outcome = await server.request(subject, {}).then((data) => ({ data }), (error: AppError) => ({ code: error.code }))
        asked.get(token)?.({ ...outcome, waitedMs: performance.now() - started })
        return outcome
      }, { queue: 't' })
      // serve() subscribes without waiting on the server; a ping's round trip means every
      // subscription sent before it is in place, so the first test cannot meet "no responders".
      expect(await Promise.all([server.ping(), replica.ping()])).toEqual([true, true])
    })
    afterAll(async () => {
      await Promise.all([client, server, replica].map((b) => b.close()))
      await env.teardown()
    })

    it('carries the caller\'s request id to the handler, and none when there is none', async () => {
      expect(await withRequestId('req-42', () => client.request('t.v1.request-id', {}))).toEqual({ requestId: 'req-42' })
      expect(await client.request('t.v1.request-id', {})).toEqual({ requestId: null })
    })

    it('returns the handler data to the caller', async () => {
      expect(await client.request('t.v1.echo', { a: 1 })).toEqual({ echoed: { a: 1 } })
    })

    it('answers requestJson with the JSON bytes of the handler data, and its failures as request does', async () => {
      const bytes = await client.requestJson('t.v1.echo', { text: 'naïve "quoted" ✓', list: [1, null] })
      expect(bytes).toBeInstanceOf(Uint8Array)
      expect(JSON.parse(new TextDecoder().decode(bytes))).toEqual({ echoed: { text: 'naïve "quoted" ✓', list: [1, null] } })
      const error = await failure(client.requestJson('t.v1.fail', {}))
      expect([error.code, error.message]).toEqual(['not_found', 'no such thing'])
      expect((await failure(client.requestJson('t.v1.nobody', {}))).code).toBe('unavailable')
    })

    it('sends a JsonText answer as the data\'s JSON text: requestJson gets those bytes, request their value', async () => {
      const text = '{"items":[{"name":"naïve \\"q\\" ✓"}],"next_cursor":null}'
      expect(new TextDecoder().decode(await client.requestJson('t.v1.text', { text }))).toBe(text)
      expect(await client.request('t.v1.text', { text })).toEqual({ items: [{ name: 'naïve "q" ✓' }], next_cursor: null })
      // Over the limit it is refused as any other reply is.
      const error = await failure(client.request('t.v1.text', { size: CONTRACT_MAX_PAYLOAD }))
      expect([error.code, error.message]).toEqual(['internal', expect.stringContaining('too large for the message bus')])
    })

    it('returns exactly what a JSON copy of the reply is, also for a reply of one level of values', async () => {
      for (const kind of ['csv', 'changed', 'instance']) {
        expect({ kind, reply: await client.request('t.v1.flat', { kind }) }).toEqual({ kind, reply: JSON.parse(JSON.stringify(flatReplies[kind])) })
      }
      expect(Object.is((await client.request<{ zero: number }>('t.v1.flat', { kind: 'changed' })).zero, 0)).toBe(true)
      // Under the limit in characters but over it once escaped: measured as the text it travels as.
      for (const kind of ['escapes', 'quotes']) {
        const error = await failure(client.request('t.v1.flat', { kind }))
        expect({ kind, code: error.code, tooLarge: error.message.includes('too large') }).toEqual({ kind, code: 'internal', tooLarge: true })
      }
    })

    it('rebuilds an AppError thrown by the handler with its code and message', async () => {
      const error = await failure(client.request('t.v1.fail', {}))
      expect(error).toBeInstanceOf(AppError)
      expect([error.code, error.status, error.message]).toEqual(['not_found', 404, 'no such thing'])
    })

    it('turns an unexpected handler failure into an internal error without leaking its message', async () => {
      const error = await failure(client.request('t.v1.crash', {}))
      expect([error.code, error.status, error.message]).toEqual(['internal', 500, 'internal error'])
    })

    it('answers unavailable (503) when nothing serves the subject', async () => {
      const error = await failure(client.request('t.v1.nobody', {}))
      expect([error.code, error.status]).toEqual(['unavailable', 503])
    })

    it('answers timeout (504) when the handler is too slow', async () => {
      const error = await failure(client.request('t.v1.slow', {}, { timeoutMs: 50 }))
      expect([error.code, error.status]).toEqual(['timeout', 504])
    })

    it('fails a handler\'s own request at once, without sending it, when its caller\'s deadline has passed', async () => {
      const outcome = askedFor('late')
      const runs = deadlineRuns
      const error = await failure(client.request('t.v1.ask', { token: 'late', subject: 't.v1.deadline', afterMs: 150 }, { timeoutMs: 100 }))
      expect(error.code).toBe('timeout')
      const { code, waitedMs } = await outcome
      expect(code).toBe('timeout')
      expect(waitedMs).toBeLessThan(50)
      await Bun.sleep(50) // a request that went out would have run by now
      expect(deadlineRuns).toBe(runs)
    })

    it('gives a handler\'s own request its caller\'s deadline when that is sooner than its own timeout', async () => {
      const before = Date.now()
      const { data } = await client.request<{ data: number }>('t.v1.ask', { token: 'within', subject: 't.v1.deadline', afterMs: 0 }, { timeoutMs: 2_000 })
      expect(data).toBeGreaterThanOrEqual(before + 2_000)
      expect(data).toBeLessThanOrEqual(Date.now() + 2_000)
      // Its own timeout (10 s) would wait out t.v1.slow's 300 ms; its caller's 100 ms do not.
      const outcome = askedFor('slow')
      // The caller's 100 ms and the handler's own request end together: either answer may reach
      // the caller first (its own timeout, or the handler's `timeout` outcome), both a timeout.
      const answered = await client.request<{ code?: string }>('t.v1.ask', { token: 'slow', subject: 't.v1.slow', afterMs: 0 }, { timeoutMs: 100 })
        .then((data) => data.code, (error: AppError) => error.code)
      expect(answered).toBe('timeout')
      const { code, waitedMs } = await outcome
      expect(code).toBe('timeout')
      expect(waitedMs).toBeLessThan(300)
    })

    it('shares requests between replicas of one queue group', async () => {
      const answers = new Set<unknown>()
      for (let i = 0; i < 40 && answers.size < 2; i++) answers.add(await client.request('t.v1.who', {}))
      expect([...answers].sort()).toEqual(['replica', 'server'])
    })

    it('passes a copy of the payload, never the caller\'s object', async () => {
      const payload = { list: [1] }
      expect(await client.request('t.v1.mutate', payload)).toEqual({ list: [1, 2] })
      expect(payload).toEqual({ list: [1] })
    })

    it('delivers published events to wildcard subscribers', async () => {
      const seen: [unknown, string][] = []
      const stop = server.subscribe('ev.>', (event, subject) => void seen.push([event, subject]))
      await Bun.sleep(50) // a NATS subscription is live once the server has seen it
      await client.publish('ev.abc', { n: 1 })
      await client.publish('other.abc', { n: 2 })
      for (let i = 0; i < 40 && seen.length === 0; i++) await Bun.sleep(25)
      stop()
      expect(seen).toEqual([[{ n: 1 }, 'ev.abc']])
    })

    it('refuses a request over maxPayload at once with 413, without sending it', async () => {
      expect(client.maxPayload).toBe(CONTRACT_MAX_PAYLOAD)
      const started = performance.now()
      const error = await failure(client.request('t.v1.echo', { blob: 'x'.repeat(CONTRACT_MAX_PAYLOAD) }))
      expect([error.code, error.status]).toEqual(['payload_too_large', 413])
      expect(performance.now() - started).toBeLessThan(1000)
    })

    it('turns a reply over maxPayload into an error reply at once, never a timeout', async () => {
      expect(await client.request('t.v1.big', { size: 1000 })).toHaveLength(1000)
      const started = performance.now()
      const error = await failure(client.request('t.v1.big', { size: CONTRACT_MAX_PAYLOAD + 1 }))
      expect([error.code, error.status]).toEqual(['internal', 500])
      expect(error.message).toContain('too large')
      expect(performance.now() - started).toBeLessThan(1000)
    })

    it('delivers an event to every plain subscriber and to one member of each queue group', async () => {
      const got = { plain: 0, a1: 0, a2: 0, b: 0 }
      const stops = [
        server.subscribe('q.ev', () => void got.plain++),
        server.subscribe('q.ev', () => void got.a1++, { queue: 'a' }),
        replica.subscribe('q.ev', () => void got.a2++, { queue: 'a' }),
        replica.subscribe('q.ev', () => void got.b++, { queue: 'b' }),
      ]
      await Bun.sleep(50)
      for (let i = 0; i < 20; i++) await client.publish('q.ev', { i })
      await client.ping()
      for (let i = 0; i < 40 && got.plain + got.a1 + got.a2 + got.b < 60; i++) await Bun.sleep(25)
      for (const stop of stops) stop()
      expect([got.plain, got.a1 + got.a2, got.b]).toEqual([20, 20, 20])
    })

    it('delivers exactly the JSON copy of an event, each subscriber its own, also of one level of values', async () => {
      const seen: Record<string, unknown[]> = { a: [], b: [] }
      const record = (who: string) => (event: unknown) => {
        seen[who]!.push(structuredClone(event))
        ;(event as Record<string, unknown>).touched = who // each subscriber's own copy: the other never sees this
      }
      const stops = [server.subscribe('flat.ev', record('a')), replica.subscribe('flat.ev', record('b'))]
      await Promise.all([server.ping(), replica.ping()])
      for (const kind of ['csv', 'changed', 'instance']) await client.publish('flat.ev', flatReplies[kind])
      await client.ping()
      for (let i = 0; i < 40 && seen.a!.length + seen.b!.length < 6; i++) await Bun.sleep(25)
      for (const stop of stops) stop()
      const expected = ['csv', 'changed', 'instance'].map((kind) => JSON.parse(JSON.stringify(flatReplies[kind])))
      expect(seen).toEqual({ a: expected, b: expected })
      expect(Object.is((seen.a![1] as { zero: number }).zero, 0)).toBe(true)
      expect('touched' in (flatReplies.csv as object)).toBe(false) // nor does the publisher
    })

    it('follows subscriptions made and ended between events on one subject, and gives each subscriber its own copy', async () => {
      const seen: Record<string, number[]> = { first: [], later: [], grouped: [] }
      const record = (who: string) => (event: unknown) => {
        const { n, list } = event as { n: number; list: number[] }
        list.push(n) // a subscriber that changes its event changes no one else's
        seen[who]!.push(list.length)
      }
      const settle = async (count: number) => {
        await client.ping()
        for (let i = 0; i < 40 && Object.values(seen).flat().length < count; i++) await Bun.sleep(25)
      }
      const stopFirst = server.subscribe('late.ev', record('first'))
      await Bun.sleep(50)
      await client.publish('late.ev', { n: 1, list: [] })
      await settle(1)
      const stopLater = replica.subscribe('late.*', record('later'))
      const stopGrouped = replica.subscribe('late.ev', record('grouped'), { queue: 'g' })
      await Bun.sleep(50)
      await client.publish('late.ev', { n: 2, list: [] })
      await settle(4)
      stopFirst()
      await Bun.sleep(50)
      await client.publish('late.ev', { n: 3, list: [] })
      await settle(6)
      stopLater()
      stopGrouped()
      expect(seen).toEqual({ first: [1, 1], later: [1, 1], grouped: [1, 1] })
    })

    it('reports itself reachable through ping', async () => {
      expect(await client.ping()).toBe(true)
    })
  })
}
