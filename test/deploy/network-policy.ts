/**
 * What the NetworkPolicies of a build let through, read the way Kubernetes reads them
 * (networking.k8s.io/v1, ingress only): a pod selected by no policy takes any connection; a pod
 * selected by one takes only what some selecting policy's ingress rule allows (any `from` entry,
 * and any port entry, by number or by the container port's name).
 */
import type { K8sObject } from './manifests'

export type Pod = { namespace: string; labels: Record<string, string> }
type Requirement = { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }
type Selector = { matchLabels?: Record<string, string>; matchExpressions?: Requirement[] }

export function matches(selector: Selector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return true
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value)
  return byLabel && (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    if (operator === 'Exists') return key in labels
    if (operator === 'DoesNotExist') return !(key in labels)
    const isIn = key in labels && values.includes(labels[key]!)
    return operator === 'In' ? isIn : !isIn
  })
}

/** Kubernetes labels every namespace with its own name (since 1.21). */
const namespaceLabels = (namespace: string) => ({ 'kubernetes.io/metadata.name': namespace })

function peerMatches(peer: { podSelector?: Selector; namespaceSelector?: Selector; ipBlock?: unknown }, source: Pod, policyNamespace: string): boolean {
  if (peer.ipBlock) return false // the tests name pods, not addresses
  const namespaceOk = peer.namespaceSelector ? matches(peer.namespaceSelector, namespaceLabels(source.namespace)) : source.namespace === policyNamespace
  return namespaceOk && matches(peer.podSelector, source.labels)
}

/** The policies of `objects` that select `pod`. */
export function policiesSelecting(objects: K8sObject[], pod: Pod): K8sObject[] {
  return objects.filter((o) => o.kind === 'NetworkPolicy' && (o.metadata.namespace ?? pod.namespace) === pod.namespace
    && (o.spec.policyTypes ?? ['Ingress']).includes('Ingress') && matches(o.spec.podSelector, pod.labels))
}

/** May `source` open a TCP connection to `port` (its number and container-port name) of `pod`? */
export function allows(objects: K8sObject[], source: Pod, pod: Pod, port: { number: number; name?: string }): boolean {
  const policies = policiesSelecting(objects, pod)
  if (policies.length === 0) return true
  return policies.some((policy) => (policy.spec.ingress ?? []).some((rule: { from?: object[]; ports?: { port?: string | number; protocol?: string }[] }) => {
    const fromOk = !rule.from || rule.from.length === 0 || rule.from.some((peer) => peerMatches(peer, source, policy.metadata.namespace ?? pod.namespace))
    const portOk = !rule.ports || rule.ports.length === 0 || rule.ports.some((p) => (p.protocol ?? 'TCP') === 'TCP' && (p.port === undefined || p.port === port.number || p.port === port.name))
    return fromOk && portOk
  }))
}
