import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startNats, type NatsServer } from '../harness/nats'
import { startRedis, type RedisServer } from '../harness/redis'
import { skipReason } from '../harness/servers'
import { startReplica, type Replica } from './fleet'
import { ROOT } from './manifests'

/**
 * deploy/monitoring/alerts.yaml: every metric a rule reads is one a real process serves, of the
 * type the rule treats it as. That the rules load and fire on their signals (alerts.test.yaml) is
 * promtool's to show, run by hand (deploy/README.md "Alerts"): building promtool takes minutes, so
 * CI does not, and a test that runs only where it happens to be installed would be a skip in CI.
 */
const RULES = join(ROOT, 'deploy/monitoring/alerts.yaml')
/** Series of kube-state-metrics the readiness rules read: the kubelet's verdict, no process's metric. */
const KUBE_STATE_METRICS = ['kube_pod_status_ready']
const PROMQL_WORDS = new Set(['by', 'without', 'and', 'or', 'unless', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset'])

type Rule = { alert: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> }
const rules = (): Rule[] => (Bun.YAML.parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules)

/** The metric names of a PromQL expression: identifiers that are no function, keyword, label or duration. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
  const names = [...bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)].map((m) => m[1]!).filter((n) => !PROMQL_WORDS.has(n))
  return [...new Set(names)]
}

/** Metric names inside rate( / increase( calls: these must be counters. */
function countedNames(expr: string): string[] {
  return [...expr.matchAll(/\b(?:rate|increase)\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)/g)].map((m) => m[1]!)
}

/** name -> type, from the `# TYPE` lines of a /metrics answer (histograms also under their series' names). */
function types(exposition: string): Map<string, string> {
  const found = new Map<string, string>()
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    found.set(name!, type!)
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) found.set(name! + suffix, 'counter')
  }
  return found
}

describe('deploy/monitoring/alerts.yaml', () => {
  it('names each alert once, with a severity and a summary', () => {
    const all = rules()
    expect(all.length).toBeGreaterThan(0)
    expect(new Set(all.map((r) => r.alert)).size).toBe(all.length)
    for (const rule of all) {
      expect({ alert: rule.alert, severity: ['critical', 'warning'].includes(rule.labels?.severity ?? '') }).toEqual({ alert: rule.alert, severity: true })
      expect(rule.annotations?.summary).toBeTruthy()
    }
  })

  it('reads metric names out of PromQL', () => {
    expect(metricNames('sum by (server) (rate(lr_a_total{status=~"5.."}[5m])) / sum without (pod) (b) > 0.05 and on (x) absent(c{d="e"} == 1)')).toEqual(['lr_a_total', 'b', 'c'])
  })
})

const skip = skipReason('nats-server') ?? skipReason('redis-server')
if (skip) describe.skip(`alert rules against real processes (${skip})`, () => it('reads only metrics the processes serve', () => {}))
else
  describe('alert rules against real processes (TRANSPORT=nats, LIMITER=redis)', () => {
    const data = mkdtempSync(join(tmpdir(), 'lr-alerts-'))
    let nats: NatsServer
    let redis: RedisServer
    const replicas: Replica[] = []
    const served = new Map<string, string>()

    beforeAll(async () => {
      nats = await startNats({ jetstream: true })
      redis = await startRedis()
      const env = { ...Bun.env, NATS_URL: nats.url, LIMITER: 'redis', REDIS_URL: redis.url, DATA_DIR: data, SCAN_SPOOL_DIR: join(data, 'spool') } as Record<string, string>
      // The gateway (the limiter's gauge, HTTP series) and the resolver (its scan series); every
      // other family is listed by every process (README "Logs and metrics").
      for (const name of ['gateway', 'resolver'] as const) replicas.push(await startReplica(name, env))
      for (const replica of replicas) await replica.ready()
      for (const replica of replicas) for (const [name, type] of types(await (await fetch(replica.metrics)).text())) served.set(name, type)
    }, 30_000)

    afterAll(async () => {
      for (const replica of replicas) replica.kill()
      await Promise.all([nats?.stop(), redis?.stop()])
      rmSync(data, { recursive: true, force: true })
    })

    it('reads only metrics a process serves (or kube-state-metrics\' readiness), and rates only counters', () => {
      for (const rule of rules()) {
        for (const name of metricNames(rule.expr)) {
          const known = KUBE_STATE_METRICS.includes(name) || served.has(name)
          expect({ alert: rule.alert, name, known }).toEqual({ alert: rule.alert, name, known: true })
        }
        for (const name of countedNames(rule.expr)) expect({ alert: rule.alert, name, type: served.get(name) }).toEqual({ alert: rule.alert, name, type: 'counter' })
      }
    })

    it('serves only families README "Logs and metrics" lists, so an alert can be written from it', () => {
      const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
      const families = [...served].filter(([name, type]) => type !== 'counter' || !/_(bucket|sum|count)$/.test(name) || !served.has(name.replace(/_(bucket|sum|count)$/, '')))
      expect(families.map(([name]) => name).filter((name) => !readme.includes(`\`${name}\``))).toEqual([])
    })
  })
