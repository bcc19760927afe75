import { type Bus, type Config, decode, DYNAMIC_CHANGED_ALL, DYNAMIC_SUBJECTS, type ResolveReply, ResolverEntry, type ScanEvent } from '@lr/proto'
import { errorFields, log } from '@lr/platform/log'
import { createBusScanPublisher } from '@lr/platform/scan-publisher'
import { createResolver, type Resolver, type ResolverDeps, type ResolverFeed, resolverSettingsOf } from './resolver'

/** The feed over a bus: a lookup is a request to the dynamic service, changes are its events (checked here). */
export function createBusFeed(bus: Bus, lookupTimeoutMs = 3000): ResolverFeed {
  return {
    lookup: (code) => bus.request<ResolveReply>(DYNAMIC_SUBJECTS.resolve, { code }, { timeoutMs: lookupTimeoutMs }),
    // No queue group: every resolver must hear every change. `settles`: over NATS the dynamic
    // service answers a PATCH, DELETE or review once every live resolver has applied it.
    follow: (changed) => bus.subscribe(DYNAMIC_CHANGED_ALL, (event) => changed(decode(ResolverEntry, event)), { settles: true }),
    // Over NATS, changes published while this resolver's connection was down never reach it
    // (a blip, or the server cutting off a slow consumer): it forgets what it cached.
    resumed: (forget) => bus.resumed?.(() => void forgetLogged(forget)) ?? (() => undefined),
  }
}

/** One line per reconnect, with the codes forgotten: every resolver thread's together. */
async function forgetLogged(forget: () => number | Promise<number>): Promise<void> {
  try {
    log().info({ codes: await forget() }, 'bus reconnected: cached codes forgotten, each is looked up again at its next scan')
  } catch (error) {
    log().error(errorFields(error), 'bus reconnected: cached codes not forgotten')
  }
}

/** A resolver over a bus: its lookups and change events over it, its scans published on it unless `publishScan` is given. */
export function createBusResolver(deps: Omit<ResolverDeps, 'feed' | 'publishScan'> & { bus: Bus; lookupTimeoutMs?: number; publishScan?: (event: ScanEvent) => void }): Resolver {
  const { bus, lookupTimeoutMs, ...rest } = deps
  return createResolver({ ...rest, feed: createBusFeed(bus, lookupTimeoutMs), publishScan: deps.publishScan ?? createBusScanPublisher(bus).publish })
}

/** The resolver of a deployment: its settings from config, its scans handed to `publishScan`. */
export function createResolverFromConfig(bus: Bus, config: Config, publishScan: (event: ScanEvent) => void): Resolver {
  return createBusResolver({ bus, ...resolverSettingsOf(config), publishScan })
}
