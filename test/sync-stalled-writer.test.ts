// A writer that stalls (a paused VM or process, a network that holds its packets) between taking
// its list position block and writing its records, for longer than OPEN_BLOCK_LEASE_MS: readers
// take the block for a crashed writer's and list past it. Its records then land behind every
// reader's cursor, with times older than a sync client has seen; before PositionBlock.lapsed they
// stayed there, answered 201 or 200 and never in that client's list of changes. Now the writer
// moves them to a new change position and time (README "List positions on MongoDB").
import { afterEach, describe, expect, it } from 'bun:test'
import type { Principal } from '@lr/proto'
import { OPEN_BLOCK_LEASE_MS } from '@lr/platform/mongo-position'
import { mongoSkipReason, useMongoServer } from './harness/ferretdb'
import { commandOn, recordsReplica } from './harness/mongo-wire'
import { startTcpProxy, type TcpProxy } from './harness/tcp-proxy'

const alice: Principal = { account_id: 'acct_a', key_id: 'key_a', scope: 'personal', team_id: null, role: 'owner' }

const skip = mongoSkipReason()
describe.skipIf(Boolean(skip))('list of changes on MongoDB: a writer stalled past the open-block lease', () => {
  const url = useMongoServer()
  const cleanups: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })
  // The writer's every packet is held, as a paused process's would be; but this process goes on
  // running, so its driver would take the server as silent after 5 s and give the write up (a
  // 503: platform/src/mongo-silence.ts). A paused process's timers stop with it: no such rule
  // fires there, which the writer's silentMs past the hold stands for.
  const replica = (name: string, proxy?: TcpProxy) => recordsReplica(url(), name, cleanups, proxy, proxy ? { silentMs: 60_000 } : {})

  /**
   * A writer holds its write to the records on the wire past the lease, a reader lists meanwhile
   * (after a later write of its own) as a sync client does, then the writer's write lands: the
   * client's next pass, from the largest `updated_at` it saw, must bring what the writer answered.
   */
  async function stalledWrite(command: string, prepare: (writer: Replica) => Promise<string | null>, act: (writer: Replica, id: string | null) => Promise<unknown>) {
    const name = `lr_syncstall_${crypto.randomUUID().slice(0, 8)}`
    const proxy = await startTcpProxy(Number(new URL(url()).port))
    cleanups.push(() => proxy.stop())
    const reader = await replica(name)
    cleanups.push(() => reader.conn.dropDatabase())
    const writer = await replica(name, proxy)
    const changes = async (since: number) => (await reader.records.list(alice, { updated_since: String(since), include_deleted: 'true', limit: '1000' } as never)).qrcodes as Record<string, unknown>[]
    const id = await prepare(writer)

    const held = proxy.holdFrom(commandOn('static_records', command))
    const stalled = act(writer, id)
    await held // its block is taken; its write waits on the wire
    await Bun.sleep(OPEN_BLOCK_LEASE_MS + 1500)
    await reader.records.create(alice, { url: 'https://example.com/later', name: 'later' })
    const mirror = new Map((await changes(0)).map((r) => [r.qr_id, r]))
    const T = Math.max(...[...mirror.values()].map((r) => r.updated_at as number))
    proxy.release()
    const answer = await stalled
    for (const r of await changes(T)) mirror.set(r.qr_id, r)
    return { answer, mirror, T, id, reader }
  }
  type Replica = Awaited<ReturnType<typeof replica>>
  const createOne = async (writer: Replica) => ((await writer.records.create(alice, { url: 'https://example.com/first', name: 'first' })) as { created: { qr_id: string }[] }).created[0]!.qr_id

  it('brings a stalled create and batch, as answered', async () => {
    const { answer, mirror, T } = await stalledWrite('insert', async () => null, (writer) => writer.records.batch(alice, { qrcodes: ['a', 'b'].map((n) => ({ url: `https://example.com/${n}`, name: n })) }))
    for (const record of (answer as { created: Record<string, unknown>[] }).created) {
      expect(mirror.get(record.qr_id as string)).toEqual(record)
      expect(record.updated_at as number).toBeGreaterThanOrEqual(T)
    }
  }, 30_000)

  it('brings a stalled PATCH, as answered', async () => {
    const { answer, mirror, T, id } = await stalledWrite('findAndModify', createOne, (writer, id) => writer.records.update(alice, id!, { name: 'renamed' }))
    expect(answer).toMatchObject({ qr_id: id, name: 'renamed' })
    expect(mirror.get(id!)).toEqual(answer as Record<string, unknown>)
    expect((answer as { updated_at: number }).updated_at).toBeGreaterThanOrEqual(T)
  }, 30_000)

  it('brings a stalled DELETE as a tombstone', async () => {
    const { answer, mirror, id } = await stalledWrite('findAndModify', createOne, (writer, id) => writer.records.delete(alice, id!))
    expect(answer).toEqual({ deleted: id })
    expect(mirror.get(id!)).toEqual({ qr_id: id, deleted_at: expect.any(Number), updated_at: expect.any(Number) })
  }, 30_000)
})
