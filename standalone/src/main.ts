import { availableParallelism } from 'node:os'
import { loadConfigOrExit, onShutdown } from '@lr/platform/lifecycle'
import { listening, startOrExit } from '@lr/platform/startup'
import { errorFields, log, startLogging } from '@lr/platform/log'
import { observeResolver, resolverSettingsOf, startResolverThreads } from '@lr/dynamic'
import { startStandalone } from './standalone'

/** `bun start`: the whole product in this process, the API on PORT and short links on SHORT_PORT. */
const config = loadConfigOrExit({ ...Bun.env, TRANSPORT: 'memory' })
startLogging('standalone', config.LOG_LEVEL)
// Short links on threads of their own (one per core unless set), or on this thread with 0.
const resolverThreads = config.RESOLVER_THREADS ?? availableParallelism()
const { product, server, short } = await startOrExit('standalone', async () => {
  const product = await startStandalone(config)
  const server = listening('PORT', config.PORT, () => product.gateway.listen({ port: config.PORT, hostname: '0.0.0.0' }))
  const short =
    resolverThreads > 0
      ? await startResolverThreads({
          threads: resolverThreads,
          port: config.SHORT_PORT,
          bus: product.bus,
          publishScan: product.scans.publish,
          settings: resolverSettingsOf(config),
          logger: 'standalone',
          logLevel: config.LOG_LEVEL,
          failed: (error) => {
            log().error(errorFields(error), 'short links can no longer be answered: stopping')
            process.exit(1)
          },
        })
      : listening('SHORT_PORT', config.SHORT_PORT, () => Bun.serve({ port: config.SHORT_PORT, hostname: '0.0.0.0', ...observeResolver(product.resolver.fetch) }))
  return { product, server, short }
})
log().info(
  { port: server.server?.port, short_port: short.port, resolver_threads: resolverThreads, store: config.STORE, data_dir: config.DATA_DIR },
  `one process: API on :${server.server?.port}, short links on :${short.port}`,
)
onShutdown('standalone', async () => {
  await server.stop()
  await short.stop()
  await product.stop()
})
