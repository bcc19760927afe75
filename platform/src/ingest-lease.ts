import type { NatsConnection } from 'nats'
import { cannotMakeYet, isMissingStream } from './jetstream-faults'
import { watchRefusals } from './jetstream-refusals'
import { openBucket } from './jetstream-streams'
import { errorFields, log } from './log'

/**
 * Which analytics replica applies scans: one at a time, by a lease in a JetStream key-value
 * bucket. Why (docs/decisions.md §6): the counters are read-modify-write on stores that have no
 * atomic update across connections (FerretDB), and one writer applies batches in stream order.
 * The other replicas serve reads and take the lease over within `ttlMs` of the holder's death;
 * what the dead holder had taken comes back after the consumer's ack wait.
 *
 * `create` on a key is atomic on the server: exactly one replica wins it. The holder renews with
 * a compare-and-set on its revision every ttlMs / 4; the bucket's max age removes an entry that
 * nobody renews, so a crashed holder frees the lease by itself.
 *
 * A holder that was only paused (SIGSTOP, a VM or container frozen, a starved event loop) for
 * longer than ttlMs has lost the lease to another replica meanwhile, though it has not run a
 * renewal to learn so: `held()` is therefore false from ttlMs after its last write of the lease
 * was sent (the server's max age starts later, when it stores it), whatever its revision. Before,
 * such a holder went on applying the batches it held, which the consumer had meanwhile handed to
 * the new holder: both applied them (a probe: 527 scans counted of 449 redirects).
 */
export interface IngestLease {
  /** True while this replica holds the lease (and may apply scans). */
  held(): boolean
  /** Gives the lease up at once (a graceful stop), so another replica needs no wait. */
  release(): Promise<void>
}

export const LEASE_BUCKET = 'analytics_ingest'
const KEY = 'holder'

export async function acquireIngestLease(nc: NatsConnection, opts: { ttlMs?: number; holder?: string } = {}): Promise<IngestLease> {
  const { ttlMs = 3000, holder = `${process.pid}-${crypto.randomUUID().slice(0, 8)}` } = opts
  const open = () => openBucket(nc, LEASE_BUCKET, { ttl: ttlMs, history: 1 })
  let kv = await open()
  /** When the bucket was last made again: at most once a second. */
  let reopenedAt = 0
  const cannotMake = cannotMakeYet('the ingest lease bucket', { bucket: LEASE_BUCKET })
  let revision: number | undefined
  /** performance.now() until which the lease is surely ours: its last write's sending plus ttlMs. */
  let surelyUntil = 0
  let stopped = false
  // A full JetStream store refuses the lease's writes: no replica applies scans until it has room.
  const refusals = watchRefusals(`KV_${LEASE_BUCKET}`, 'no analytics replica can take the ingest lease: scans are not applied')

  let timer: Timer | undefined
  async function tick(): Promise<void> {
    // A closed connection never comes back (reconnects keep it open): nothing left to hold.
    if (nc.isClosed()) {
      clearInterval(timer)
      revision = undefined
      return
    }
    try {
      const sent = performance.now()
      if (revision === undefined) {
        revision = await kv.create(KEY, new TextEncoder().encode(holder))
        log().info({ holder }, 'ingest lease taken: this replica applies scans')
      } else revision = await kv.update(KEY, new TextEncoder().encode(holder), revision)
      surelyUntil = sent + ttlMs
      refusals.stored()
    } catch (error) {
      refusals.failed(error)
      if (revision !== undefined) log().warn({ holder, ...errorFields(error) }, 'ingest lease lost')
      revision = undefined // someone else holds it, or the server is away: try again next tick
      // The bucket itself is gone (a broker restarted without its JetStream store answers every
      // write "no responders"): made again, or no replica would ever apply scans again.
      if (isMissingStream(error) && Date.now() - reopenedAt >= 1000) {
        reopenedAt = Date.now()
        await open().then(
          (bucket) => {
            kv = bucket
            log().warn({ bucket: LEASE_BUCKET }, 'the ingest lease bucket was missing: made it again')
          },
          cannotMake,
        )
      }
    }
  }
  await tick()
  timer = setInterval(() => void (stopped ? undefined : tick()), Math.max(100, Math.floor(ttlMs / 4)))

  return {
    held: () => revision !== undefined && performance.now() < surelyUntil,
    async release() {
      stopped = true
      clearInterval(timer)
      refusals.close()
      if (revision === undefined) return
      revision = undefined
      await kv.delete(KEY).catch(() => undefined)
    },
  }
}
