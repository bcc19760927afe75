// Run by thread-start-failure.test.ts: the start-up of `bun start` (startOrExit) with one resolver
// thread whose start throws: SHORT_BASE_URL that is no URL, which config would refuse, handed to
// the threads as settings so that createResolver throws in the thread.
import { createLocalBus } from '@lr/platform/bus-local'
import { startOrExit } from '@lr/platform/startup'
import { startResolverThreads } from '../../src/resolver/threads'

await startOrExit('standalone', () =>
  startResolverThreads({ threads: 1, port: 0, bus: createLocalBus(), publishScans: () => {}, settings: { shortBaseUrl: 'not a url', trustProxy: 0, visitorHashKey: 'k'.repeat(32) }, answerMetrics: false, failed: () => {} }),
)
