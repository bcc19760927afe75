import { afterEach, describe, expect, it } from 'bun:test'
import { metricsText } from '@lr/platform/metrics'
import { loadConfig, type Principal } from '@lr/proto'
import { type RedisServer, startRedis } from '../../../test/harness/redis'
import { sample } from '../../../test/harness/metrics'
import { skipReason } from '../../../test/harness/servers'
import { type Admission, createAdmission } from '../../src/admission'

const skip = skipReason('redis-server')
const PRINCIPAL: Principal = { account_id: 'acct_metrics', key_id: 'key_metrics', scope: 'personal', team_id: null, role: 'owner' }

describe.skipIf(Boolean(skip))(`the gateway's admission with LIMITER=redis, on a real redis-server${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let server: RedisServer | undefined
  let admission: Admission | undefined
  afterEach(async () => {
    await admission?.close()
    await server?.stop()
  })

  const degraded = async () => sample(await metricsText(), 'lr_rate_limiter_degraded')

  it('says in lr_rate_limiter_degraded whether it limits on its own, as /readyz does, and when Redis is back', async () => {
    server = await startRedis()
    admission = await createAdmission(loadConfig({ LIMITER: 'redis', REDIS_URL: server.url }))
    // Connected (the readiness check answers), the first request is shared.
    for (const deadline = Date.now() + 5_000; !(await admission.optional.redis!()); ) {
      if (Date.now() > deadline) throw new Error('Redis never answered')
      await Bun.sleep(20)
    }
    await admission.admit(PRINCIPAL)
    expect(await degraded()).toBe(0)
    await server.stop()
    await admission.admit(PRINCIPAL)
    expect(await admission.optional.redis!()).toBe(false)
    expect(await degraded()).toBe(1)
    await server.restart()
    for (const deadline = Date.now() + 5_000; (await degraded()) !== 0; ) {
      if (Date.now() > deadline) throw new Error('still degraded 5 s after Redis came back')
      await Bun.sleep(50)
    }
    expect(await admission.optional.redis!()).toBe(true)
  })
})
