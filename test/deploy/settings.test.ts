import { describe, expect, it } from 'bun:test'
import { ConfigSchema, loadConfig } from '@lr/proto'
import { BASE, build, type K8sObject, kubectlSkipReason, ofKind, PRODUCTION, RECORD_EVENT_PUBLISHERS, settingsOf, workloadsOf } from './manifests'

/** Settings that come from the Secret, never from the ConfigMap. */
const SECRET_SETTINGS = ['NATS_URL', 'REDIS_URL', 'MONGODB_URL', 'VISITOR_HASH_KEY', 'CURSOR_SECRET']

/** The processes that open a store (openServiceStore); the gateway and the resolver open none. */
const WITH_STORE = ['auth', 'records', 'dynamic', 'analytics', 'webhooks']
/**
 * The secrets each process reads, and nothing more goes to its pod: the internet-facing gateway
 * and resolver must not carry the database's credentials.
 *   NATS_URL          every process (TRANSPORT=nats)
 *   MONGODB_URL       the processes with a store (platform/src/store.ts, lifecycle.ts openMongoIfConfigured)
 *   REDIS_URL         the gateway's limiter (gateway/src/admission.ts)
 *   VISITOR_HASH_KEY  the resolver's visitor id (services/dynamic/src/resolver/resolver.ts)
 *   CURSOR_SECRET     the list cursors of records and dynamic (services/library-records/src/deployment.ts)
 */
const SECRETS_USED: Record<string, string[]> = {
  gateway: ['NATS_URL', 'REDIS_URL'],
  resolver: ['NATS_URL', 'VISITOR_HASH_KEY'],
  auth: ['NATS_URL', 'MONGODB_URL'],
  records: ['NATS_URL', 'MONGODB_URL', 'CURSOR_SECRET'],
  dynamic: ['NATS_URL', 'MONGODB_URL', 'CURSOR_SECRET'],
  analytics: ['NATS_URL', 'MONGODB_URL'],
  webhooks: ['NATS_URL', 'MONGODB_URL'],
}
const usersOf = (secret: string) => Object.keys(SECRETS_USED).filter((name) => SECRETS_USED[name]!.includes(secret))

/** Settings a workload sets for itself: only the processes that listen on it, or read it. */
const PER_PROCESS: Record<string, string[]> = {
  PORT: ['gateway'],
  SHORT_PORT: ['resolver'],
  RESOLVER_THREADS: ['resolver'],
  SCAN_SPOOL_DIR: ['resolver'],
  // The bound of the resolver's scan spool, and of the record events records and dynamic hold.
  SCAN_SPOOL_MAX_MB: ['resolver', ...RECORD_EVENT_PUBLISHERS],
  // Where records and dynamic hold record events (a volume of their own); with STORE=mongo no
  // process keeps anything else under it, so the others go without.
  DATA_DIR: RECORD_EVENT_PUBLISHERS,
  SCAN_RELAY: ['analytics'],
  SCAN_RELAY_NICE: ['analytics'],
  // STORE=mongo makes loadConfig require MONGODB_URL: it goes with it, to the processes with a store.
  STORE: WITH_STORE,
  ...Object.fromEntries(SECRET_SETTINGS.map((secret) => [secret, usersOf(secret)])),
}
/** Settings no manifest provides, and why (none today). */
const NOT_PROVIDED: Record<string, string> = {}
const SECRET_NAME = 'library-records-secrets'

const READ = Object.keys(ConfigSchema.properties).sort()
const sorted = (keys: Iterable<string>) => [...keys].sort()

/** What a Deployment must receive: every setting the code reads, less the documented exceptions. */
const expectedFor = (name: string) =>
  READ.filter((key) => !(key in NOT_PROVIDED) && (!(key in PER_PROCESS) || PER_PROCESS[key]!.includes(name)))

function checkSettings(dir: string) {
  const objects = () => build(dir)
  const each = (check: (d: K8sObject) => void) => () => {
    for (const deployment of workloadsOf(objects())) {
      try {
        check(deployment)
      } catch (error) {
        throw new Error(`${deployment.kind} ${deployment.metadata.name}: ${(error as Error).message}`)
      }
    }
  }

  it('provides, together, exactly the settings the code reads, less the documented exceptions', () => {
    const provided = new Set<string>()
    for (const deployment of workloadsOf(objects())) for (const key of settingsOf(deployment, objects()).keys()) provided.add(key)
    expect(sorted(provided)).toEqual(READ.filter((key) => !(key in NOT_PROVIDED)))
  })

  it('gives every workload every setting it reads and nothing else', each((d) => {
    expect(sorted(settingsOf(d, objects()).keys())).toEqual(expectedFor(d.metadata.name))
  }))

  it('gives each workload only the secrets its process uses: none of the database to the gateway or the resolver', () => {
    const given = Object.fromEntries(
      workloadsOf(objects()).map((d) => [d.metadata.name, sorted((d.spec.template.spec.containers[0].env ?? []).filter((e: any) => e.valueFrom?.secretKeyRef).map((e: any) => e.valueFrom.secretKeyRef.key))]),
    )
    expect(given).toEqual(Object.fromEntries(Object.entries(SECRETS_USED).map(([name, keys]) => [name, sorted(keys)])))
    // Nor by another way in: no Secret mounted as a volume or taken whole with envFrom.
    for (const d of workloadsOf(objects())) {
      const pod = d.spec.template.spec
      expect((pod.volumes ?? []).filter((v: any) => v.secret || v.projected)).toEqual([])
      expect((pod.containers[0].envFrom ?? []).filter((source: any) => source.secretRef)).toEqual([])
    }
    for (const name of ['gateway', 'resolver']) expect(given[name]).not.toContain('MONGODB_URL')
  })

  it('keeps the shared settings in one ConfigMap, with no secret in it', () => {
    const maps = ofKind(objects(), 'ConfigMap')
    expect(maps).toHaveLength(1)
    const keys = Object.keys(maps[0]!.data!)
    expect(sorted(keys)).toEqual(READ.filter((key) => !(key in NOT_PROVIDED) && !(key in PER_PROCESS) && !SECRET_SETTINGS.includes(key)))
  })

  it('takes the URLs, the visitor-hash key and the cursor key from the Secret, by their setting names', each((d) => {
    for (const entry of d.spec.template.spec.containers[0].env) {
      if (!SECRET_SETTINGS.includes(entry.name)) continue
      expect(entry.valueFrom.secretKeyRef).toEqual({ name: SECRET_NAME, key: entry.name })
    }
  }))

  it('sets values the process accepts (loadConfig), with the Secret filled in', each((d) => {
    const env = Object.fromEntries(
      [...settingsOf(d, objects())].map(([key, value]) => [key, value.startsWith('<secret') ? SECRET_EXAMPLES[key] : value]),
    )
    expect(() => loadConfig(env)).not.toThrow()
  }))
}

/** Values of the shape the Secret must hold (deploy/README.md). */
const SECRET_EXAMPLES: Record<string, string> = {
  NATS_URL: 'nats://nats.library-records.svc:4222',
  REDIS_URL: 'redis://:password@redis-master.library-records.svc:6379',
  MONGODB_URL: 'mongodb://library-records:password@library-records-mongodb-svc.library-records.svc:27017/library-records?replicaSet=library-records-mongodb&authSource=admin',
  VISITOR_HASH_KEY: 'a-long-random-secret-value',
  CURSOR_SECRET: 'another-long-random-secret-value',
}

const skip = kubectlSkipReason()
if (skip) describe.skip(`settings in the manifests (${skip})`, () => it('cross-checks ConfigSchema with the manifests', () => {}))
else {
  describe(`settings: base (${BASE})`, () => checkSettings(BASE))
  describe(`settings: production overlay (${PRODUCTION})`, () => checkSettings(PRODUCTION))
}
