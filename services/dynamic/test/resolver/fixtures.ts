import { type Bus } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { dynamicChangedSubject } from '@lr/proto'
import { SCANS_ALL, type ScanEvent } from '@lr/proto'
import { serveDynamic } from '../../src/handlers'
import { createBusResolver } from '../../src/resolver/bus-feed'
import type { ResolverDeps } from '../../src/resolver/resolver'
import { personal, setup, SHORT } from '../fixtures'

export const KEY = 'test-visitor-hash-key-0123456789'
export const NOW_MS = 1_700_000_000_123
export const BROWSER = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1'

/** Lets events published on the local bus reach their subscribers. */
export const settle = () => Bun.sleep(1)

/**
 * A resolver over the local bus in front of a real dynamic service (SQLite in memory, store
 * calls counted), with every published scan collected in `scans`.
 */
export function resolverSetup(deps: Partial<ResolverDeps> & { bus?: Bus } = {}) {
  const bus = deps.bus ?? createLocalBus()
  const ctx = setup({ announce: (entry) => bus.publish(dynamicChangedSubject(entry.code), entry) })
  const stopServing = serveDynamic(bus, ctx.service)
  const resolver = createBusResolver({ shortBaseUrl: SHORT, trustProxy: 0, visitorHashKey: KEY, now: () => NOW_MS, ...deps, bus })
  const scans: ScanEvent[] = []
  bus.subscribe(SCANS_ALL, (event) => void scans.push(event as ScanEvent))
  const scan = (path: string, init: RequestInit & { base?: string } = {}) =>
    resolver.fetch(new Request(`${init.base ?? SHORT}${path}`, { headers: { 'user-agent': BROWSER }, ...init }))
  /** A new code of the personal library, active unless a status is given, and its path. */
  const code = async (destination_url = 'https://example.com/landing', status: 'active' | 'draft' = 'active') => {
    const [record] = (await ctx.service.create(personal, { destination_url, name: 'Code' })).created
    if (status === 'draft') await ctx.service.update(personal, record!.code, { status })
    await settle()
    return record!.code
  }
  return {
    ...ctx, bus, resolver, scans, scan, code,
    async close() {
      resolver.stop()
      stopServing()
      await bus.close()
      ctx.close()
    },
  }
}

/**
 * Gives `bus` (a local one, which never disconnects) Bus.resumed, and returns what calls its
 * listeners as the NATS bus does after a reconnect.
 */
export function resumable(bus: Bus): () => void {
  const listeners = new Set<() => void>()
  bus.resumed = (listener) => {
    listeners.add(listener)
    return () => void listeners.delete(listener)
  }
  return () => {
    for (const listener of listeners) listener()
  }
}
