import { join } from 'node:path'

export const ROOT = join(import.meta.dir, '..', '..')
export const BASE = 'deploy/k8s/base'
export const PRODUCTION = 'deploy/k8s/overlays/production'
/** Production with the resolver's HPA on its request rate too (a cluster with prometheus-adapter). */
export const PRODUCTION_REQUEST_RATE = 'deploy/k8s/overlays/production-request-rate'

/** A Kubernetes object as kustomize prints it; the tests read it loosely. */
export type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; spec?: any; data?: Record<string, string> }

/**
 * Why the kustomize tests cannot run, or null. Like test/harness/servers.ts: under CI=true a
 * missing kubectl is a failure (CI installs Debian's kubernetes-client), elsewhere a skip.
 */
export function kubectlSkipReason(): string | null {
  if (Bun.which('kubectl')) return null
  if (Bun.env.CI === 'true') throw new Error('kubectl is not installed; CI must install it (apt-get install -y kubernetes-client, see .ci/setup)')
  return 'kubectl is not installed (apt-get install -y kubernetes-client)'
}

/**
 * Parses a multi-document YAML stream into its non-empty documents. Bun's own parser answers an
 * array for several documents and the document itself for one (never an array for a manifest).
 */
export function parseYamlStream(text: string): unknown[] {
  const parsed = Bun.YAML.parse(text) as unknown
  return (Array.isArray(parsed) ? parsed : [parsed]).filter((doc) => doc !== null && doc !== undefined)
}

const builds = new Map<string, K8sObject[]>()

/** `kubectl kustomize <dir>`, parsed; throws with kubectl's message when the build fails. */
export function build(dir: string): K8sObject[] {
  const cached = builds.get(dir)
  if (cached) return cached
  const result = Bun.spawnSync(['kubectl', 'kustomize', join(ROOT, dir)], { stdout: 'pipe', stderr: 'pipe' })
  if (result.exitCode !== 0) throw new Error(`kubectl kustomize ${dir} failed:\n${result.stderr.toString()}`)
  const objects = parseYamlStream(result.stdout.toString()) as K8sObject[]
  builds.set(dir, objects)
  return objects
}

export const ofKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind)
export const named = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)

/**
 * Processes that hold the record events JetStream did not take in
 * `${DATA_DIR}/record-event-spool/<process>` (processRecordEvents in their entry point). Under the
 * read-only root filesystem DATA_DIR must be a writable volume: else they hold them in memory,
 * lost when the container restarts during an outage.
 */
export const RECORD_EVENT_PUBLISHERS = ['records', 'dynamic']

/** The kinds that run a process's pods: a Deployment, or a StatefulSet where a pod keeps a volume (the resolver). */
export const WORKLOAD_KINDS = ['Deployment', 'StatefulSet']
/** Every Deployment and StatefulSet. */
export const workloadsOf = (objects: K8sObject[]) => objects.filter((o) => WORKLOAD_KINDS.includes(o.kind))
export const workloadNamed = (objects: K8sObject[], name: string) => workloadsOf(objects).find((o) => o.metadata.name === name)

/** The one container of a workload's pod. */
export const containerOf = (deployment: K8sObject) => deployment.spec.template.spec.containers[0]

/** True when every label of `selector` is on `labels`. */
export const selects = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value)

/**
 * The settings a Deployment's container gets, name -> value ('<secret NAME/KEY>' for a Secret
 * reference): every key of the ConfigMaps in envFrom, then its own env.
 */
export function settingsOf(deployment: K8sObject, objects: K8sObject[]): Map<string, string> {
  const container = containerOf(deployment)
  const settings = new Map<string, string>()
  for (const source of container.envFrom ?? []) {
    if (!source.configMapRef) throw new Error(`${deployment.metadata.name}: envFrom other than a ConfigMap hides which settings it provides`)
    const map = named(objects, 'ConfigMap', source.configMapRef.name)
    if (!map) throw new Error(`${deployment.metadata.name}: ConfigMap ${source.configMapRef.name} is not in the build`)
    for (const [key, value] of Object.entries(map.data ?? {})) settings.set(key, value)
  }
  for (const entry of container.env ?? []) {
    const ref = entry.valueFrom?.secretKeyRef
    settings.set(entry.name, ref ? `<secret ${ref.name}/${ref.key}>` : entry.value)
  }
  return settings
}

/** Kubernetes quantities as numbers: CPU in cores, memory in bytes. */
export function quantity(value: string | number): number {
  const text = String(value)
  const match = /^([0-9.]+)(m|k|Ki|M|Mi|G|Gi)?$/.exec(text)
  if (!match) throw new Error(`not a quantity: ${text}`)
  const units: Record<string, number> = { m: 1e-3, k: 1e3, Ki: 1024, M: 1e6, Mi: 1024 ** 2, G: 1e9, Gi: 1024 ** 3 }
  return Number(match[1]) * (match[2] ? units[match[2]]! : 1)
}
