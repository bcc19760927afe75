import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type AppError, AUTH_SUBJECTS } from '@lr/proto'
import { call } from './harness/client'
import { freshMember } from './harness/fixtures'
import { sample } from './harness/metrics'
import { type Stack, startInProcessStack } from './harness/stack'

// A client's refusal (a 404, a duplicate email) is `refused` in the bus and store histograms, so
// an operator's alert on outcome="error" pages only for the product's own failures. Both had been
// `error`. Over NATS the gateway's side is in observability.test.ts, the buses' own in
// platform/test/bus-outcomes.test.ts.
describe('outcomes of refused requests, in one process', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startInProcessStack()
  })
  afterAll(() => stack?.stop())

  /** The counts of `series` by outcome (the registry is the test process's: tests compare two readings). */
  async function countsOf(series: Record<string, string>) {
    const metrics = await (await stack.request('/metrics')).text()
    return Object.fromEntries(
      Object.entries(series).flatMap(([name, labels]) =>
        ['ok', 'refused', 'error'].map((outcome) => [`${name} ${outcome}`, sample(metrics, `${labels.replace('}', `,outcome="${outcome}"}`)}`) ?? 0]),
      ),
    )
  }
  const grew = (before: Record<string, number>, after: Record<string, number>) =>
    Object.entries(after).filter(([series, count]) => count !== before[series]).map(([series, count]) => `${series} +${count - before[series]!}`)

  it('counts a 404 through the API as refused by the gateway\'s bus request and the records handler', async () => {
    const member = await freshMember(stack)
    const series = {
      request: 'lr_bus_request_duration_seconds_count{subject="records.v1.get"}',
      handler: 'lr_bus_handler_duration_seconds_count{subject="records.v1.get"}',
    }
    const before = await countsOf(series)
    const answer = await call(stack, 'GET', '/v1/qrcodes/qr_nosuchrecord', { key: member.key })
    expect([answer.status, answer.body]).toEqual([404, { error: 'no QR code "qr_nosuchrecord" in this library' }])
    expect(grew(before, await countsOf(series))).toEqual(['request refused +1', 'handler refused +1'])
  })

  it('counts a duplicate email as refused by the auth store, its handler and the caller', async () => {
    const email = `twice-${Date.now()}@example.test`
    const series = {
      store: 'lr_store_operation_duration_seconds_count{store="auth",operation="insertAccount"}',
      handler: `lr_bus_handler_duration_seconds_count{subject="${AUTH_SUBJECTS.accountCreate}"}`,
      request: `lr_bus_request_duration_seconds_count{subject="${AUTH_SUBJECTS.accountCreate}"}`,
    }
    await stack.bus.request(AUTH_SUBJECTS.accountCreate, { email, tier: 'pro' })
    const before = await countsOf(series)
    const refusal = await stack.bus.request(AUTH_SUBJECTS.accountCreate, { email, tier: 'pro' }).then(() => null, (error: AppError) => error)
    expect([refusal?.status, refusal?.message]).toEqual([400, `an account with email ${email} already exists`])
    expect(grew(before, await countsOf(series))).toEqual(['store refused +1', 'handler refused +1', 'request refused +1'])
  })
})
