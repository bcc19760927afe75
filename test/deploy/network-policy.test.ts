import { describe, expect, it } from 'bun:test'
import { BASE, build, containerOf, type K8sObject, kubectlSkipReason, PRODUCTION, workloadsOf } from './manifests'
import { allows, type Pod, policiesSelecting } from './network-policy'

/**
 * deploy/k8s/base/network-policy.yaml: the pods of the app take connections on their front-door
 * port from anyone, on their probe/metrics port from the monitoring namespace, on nothing else;
 * the pods of NATS, Redis and MongoDB beside them stay as their charts leave them.
 */
const NAMESPACE = 'library-records'
const SOURCES: Record<string, Pod> = {
  'ingress controller': { namespace: 'ingress-nginx', labels: { 'app.kubernetes.io/name': 'ingress-nginx' } },
  prometheus: { namespace: 'monitoring', labels: { 'app.kubernetes.io/name': 'prometheus' } },
  'another app in the namespace': { namespace: NAMESPACE, labels: { app: 'other' } },
  'a pod of the app (records)': { namespace: NAMESPACE, labels: { 'app.kubernetes.io/name': 'records', 'app.kubernetes.io/part-of': 'library-records' } },
  'a pod elsewhere in the cluster': { namespace: 'default', labels: { app: 'curl' } },
}
/** Which sources reach each port name: the front doors' `http` everyone, `health` Prometheus. */
const EXPECTED: Record<string, string[]> = { http: Object.keys(SOURCES), health: ['prometheus'] }
/** The NATS chart's pod, in the app's namespace (deploy/infra): no policy of ours may select it. */
const NATS_POD: Pod = { namespace: NAMESPACE, labels: { 'app.kubernetes.io/name': 'nats', 'app.kubernetes.io/instance': 'nats', 'app.kubernetes.io/component': 'nats' } }

function reachMatrix(objects: K8sObject[]) {
  const seen: Record<string, string[]> = {}
  const wanted: Record<string, string[]> = {}
  for (const workload of workloadsOf(objects)) {
    const pod: Pod = { namespace: workload.metadata.namespace ?? NAMESPACE, labels: workload.spec.template.metadata.labels }
    for (const port of containerOf(workload).ports as { name: string; containerPort: number }[]) {
      const key = `${workload.metadata.name}:${port.name}`
      seen[key] = Object.entries(SOURCES).filter(([, source]) => allows(objects, source, pod, { number: port.containerPort, name: port.name })).map(([name]) => name)
      wanted[key] = EXPECTED[port.name] ?? []
    }
  }
  return { seen, wanted }
}

const skip = kubectlSkipReason()
if (skip) describe.skip(`network policies (${skip})`, () => it('lets each port be reached only by whom it serves', () => {}))
else
  describe('network policies', () => {
    for (const dir of [BASE, PRODUCTION])
      it(`${dir}: each port of each process is reached only by whom it serves`, () => {
        const objects = build(dir)
        const { seen, wanted } = reachMatrix(objects)
        expect(Object.keys(seen).length).toBeGreaterThanOrEqual(8)
        expect(seen).toEqual(wanted)
        const nats = { ...NATS_POD, namespace: objects[0]!.metadata.namespace ?? NAMESPACE }
        expect(policiesSelecting(objects, nats).map((p) => p.metadata.name)).toEqual([])
      })

    it('reads policies as Kubernetes does (a selected pod takes only what a rule allows; an unselected one anything)', () => {
      const policy = (spec: object): K8sObject => ({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'p', namespace: 'n' }, spec })
      const pod: Pod = { namespace: 'n', labels: { app: 'a' } }
      const other: Pod = { namespace: 'm', labels: { app: 'b' } }
      const port = { number: 8081, name: 'health' }
      expect(allows([], other, pod, port)).toBe(true)
      expect(allows([policy({ podSelector: {}, policyTypes: ['Ingress'] })], other, pod, port)).toBe(false)
      expect(allows([policy({ podSelector: { matchLabels: { app: 'x' } } })], other, pod, port)).toBe(true)
      expect(allows([policy({ podSelector: {}, ingress: [{ ports: [{ port: 'health' }] }] })], other, pod, port)).toBe(true)
      expect(allows([policy({ podSelector: {}, ingress: [{ ports: [{ port: 8080 }] }] })], other, pod, port)).toBe(false)
      expect(allows([policy({ podSelector: {}, ingress: [{ from: [{ podSelector: {} }] }] })], other, pod, port)).toBe(false)
      expect(allows([policy({ podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'm' } } }] }] })], other, pod, port)).toBe(true)
    })
  })
