import { loadConfigOrExit, onShutdown } from '@lr/platform/lifecycle'
import { listening, startOrExit } from '@lr/platform/startup'
import { startStandalone } from './standalone'

/** `bun start`: the whole product in this process, the API on PORT and short links on SHORT_PORT. */
const config = loadConfigOrExit({ ...Bun.env, TRANSPORT: 'memory' })
const { product, server, short } = await startOrExit('standalone', async () => {
  const product = await startStandalone(config)
  const server = listening('PORT', config.PORT, () => product.gateway.listen({ port: config.PORT, hostname: '0.0.0.0' }))
  const short = listening('SHORT_PORT', config.SHORT_PORT, () => Bun.serve({ port: config.SHORT_PORT, hostname: '0.0.0.0', fetch: product.resolver.fetch }))
  return { product, server, short }
})
console.log(`[standalone] one process: API on :${server.server?.port}, short links on :${short.port}, store ${config.STORE}, data in ${config.DATA_DIR}`)
onShutdown('standalone', async () => {
  await server.stop()
  await short.stop()
  await product.stop()
})
