import { createNatsBus } from '@lr/platform/bus-nats'
import { describe } from 'bun:test'
import { startNats } from '../../test/harness/nats'
import { skipReason } from '../../test/harness/servers'
import { busContract, CONTRACT_MAX_PAYLOAD } from './bus.contract'

const skip = skipReason('nats-server')
if (skip) describe.skip(`Bus contract: NATS (${skip})`, () => {})
else
  busContract('NATS', async () => {
    const server = await startNats()
    return { connect: () => createNatsBus(server.url, 'bus-test', { maxPayload: CONTRACT_MAX_PAYLOAD }), teardown: () => server.stop() }
  })
