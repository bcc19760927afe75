import { describe, expect, it } from 'bun:test'
import { ConfigSchema, loadConfig } from '@lr/proto'
import { BASE, build, type K8sObject, kubectlSkipReason, ofKind, PRODUCTION, settingsOf } from './manifests'

/** Settings a Deployment sets for itself: only the process that listens on it. */
const PER_PROCESS: Record<string, string[]> = { PORT: ['gateway'], SHORT_PORT: ['resolver'], RESOLVER_THREADS: ['resolver'], SCAN_SPOOL_DIR: ['resolver'], SCAN_SPOOL_MAX_MB: ['resolver'], SCAN_RELAY: ['analytics'], SCAN_RELAY_NICE: ['analytics'] }
/** Settings no manifest provides, and why. */
const NOT_PROVIDED: Record<string, string> = {
  DATA_DIR: 'only the embedded SQLite store (STORE=sqlite) reads it; the manifests run STORE=mongo',
}
/** Settings that come from the Secret, never from the ConfigMap. */
const SECRET_SETTINGS = ['NATS_URL', 'REDIS_URL', 'MONGODB_URL', 'VISITOR_HASH_KEY', 'CURSOR_SECRET']
const SECRET_NAME = 'library-records-secrets'

const READ = Object.keys(ConfigSchema.properties).sort()
const sorted = (keys: Iterable<string>) => [...keys].sort()

/** What a Deployment must receive: every setting the code reads, less the documented exceptions. */
const expectedFor = (name: string) =>
  READ.filter((key) => !(key in NOT_PROVIDED) && (!(key in PER_PROCESS) || PER_PROCESS[key]!.includes(name)))

function checkSettings(dir: string) {
  const objects = () => build(dir)
  const each = (check: (d: K8sObject) => void) => () => {
    for (const deployment of ofKind(objects(), 'Deployment')) {
      try {
        check(deployment)
      } catch (error) {
        throw new Error(`Deployment ${deployment.metadata.name}: ${(error as Error).message}`)
      }
    }
  }

  it('provides, together, exactly the settings the code reads, less the documented exceptions', () => {
    const provided = new Set<string>()
    for (const deployment of ofKind(objects(), 'Deployment')) for (const key of settingsOf(deployment, objects()).keys()) provided.add(key)
    expect(sorted(provided)).toEqual(READ.filter((key) => !(key in NOT_PROVIDED)))
  })

  it('gives every Deployment every setting it reads and nothing else', each((d) => {
    expect(sorted(settingsOf(d, objects()).keys())).toEqual(expectedFor(d.metadata.name))
  }))

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
