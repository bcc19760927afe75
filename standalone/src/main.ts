import { loadConfigOrExit, onShutdown } from '@lr/platform/lifecycle'
import { startStandalone } from './standalone'

/** `bun start`: the whole product in this process, the API on PORT and short links on SHORT_PORT. */
const config = loadConfigOrExit({ ...Bun.env, TRANSPORT: 'memory' })
const product = await startStandalone(config)
const server = product.gateway.listen({ port: config.PORT, hostname: '0.0.0.0' })
const short = Bun.serve({ port: config.SHORT_PORT, hostname: '0.0.0.0', fetch: product.resolver.fetch })
console.log(`[standalone] one process: API on :${server.server?.port}, short links on :${short.port}, store ${config.STORE}, data in ${config.DATA_DIR}`)
onShutdown('standalone', async () => {
  await server.stop()
  await short.stop()
  await product.stop()
})
