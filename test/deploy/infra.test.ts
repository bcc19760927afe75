import { describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { LEASE_BUCKET } from '@lr/platform/ingest-lease'
import { RECORD_EVENT_STREAM } from '@lr/platform/record-stream'
import { SCAN_BATCH_STREAM, SCAN_STREAM } from '@lr/platform/scan-stream-config'
import { ROOT } from './manifests'

/** The values and resources deploy/README.md installs NATS, Redis and MongoDB with. */
const load = async (file: string) => Bun.YAML.parse(await Bun.file(join(ROOT, 'deploy/infra', file)).text()) as any

describe('deploy/infra', () => {
  it('runs NATS as a three-server cluster with JetStream on persistent file storage', async () => {
    const { config } = await load('nats.values.yaml')
    expect(config.cluster).toEqual({ enabled: true, replicas: 3 })
    expect(config.jetstream.enabled).toBe(true)
    expect(config.jetstream.fileStore.enabled).toBe(true)
    expect(config.jetstream.fileStore.pvc.enabled).toBe(true)
  })

  it('lets NATS carry a full 1 MiB API body in its envelope', async () => {
    const { config } = await load('nats.values.yaml')
    const [, size, unit] = /^<< (\d+)(MB) >>$/.exec(config.merge.max_payload) ?? []
    expect(unit).toBe('MB')
    expect(Number(size) * 1024 * 1024).toBeGreaterThan(1024 * 1024)
  })

  it('runs MongoDB as a replica set, which the adapters need for transactions', async () => {
    const mongo = await load('mongodb.yaml')
    expect(mongo.kind).toBe('MongoDBCommunity')
    expect(mongo.spec.type).toBe('ReplicaSet')
    expect(mongo.spec.members).toBeGreaterThanOrEqual(3)
    expect(mongo.spec.users[0].roles).toContainEqual({ name: 'readWrite', db: 'library-records' })
  })

  it('makes the MongoDB password of characters MONGODB_URL takes as they are (no base64: / + = would need percent-encoding)', async () => {
    for (const file of ['deploy/infra/mongodb.yaml', 'deploy/README.md']) {
      const commands = (await Bun.file(join(ROOT, file)).text()).match(/openssl rand [^)"]*/g) ?? []
      expect(commands.length).toBeGreaterThan(0)
      for (const command of commands) expect({ file, command }).toEqual({ file, command: expect.stringMatching(/^openssl rand -hex \d+$/) })
    }
  })

  it('runs one Redis primary with a password and persistence', async () => {
    const redis = await load('redis.values.yaml')
    expect(redis.architecture).toBe('standalone')
    expect(redis.auth.enabled).toBe(true)
    expect(redis.master.persistence.enabled).toBe(true)
  })
})

describe('deploy/README.md on a NATS cluster', () => {
  // A stream or bucket left on one replica stops what needs it while its one server is away.
  it('raises every stream the processes create, the ingest lease bucket included, to three replicas', async () => {
    const readme = await Bun.file(join(ROOT, 'deploy/README.md')).text()
    const raised = [...readme.matchAll(/nats stream edit (\S+) --replicas 3/g)].map(([, name]) => name).sort()
    expect(raised).toEqual([SCAN_BATCH_STREAM, SCAN_STREAM, RECORD_EVENT_STREAM, `KV_${LEASE_BUCKET}`].sort())
  })
})
