import { describe, expect, it } from 'bun:test'
import { isAbsolute, join, relative } from 'node:path'
import { SHUTDOWN_DEADLINE_MS } from '@lr/platform/lifecycle'
import { recordEventSpoolDir } from '@lr/platform/record-stream'
import { ENTRY_POINTS } from '../../deploy/entry-points'
import { BASE, build, PRODUCTION_REQUEST_RATE, containerOf, type K8sObject, kubectlSkipReason, ofKind, PRODUCTION, quantity, RECORD_EVENT_PUBLISHERS, ROOT, selects, settingsOf, workloadNamed, workloadsOf } from './manifests'

/** Every process of TRANSPORT=nats mode gets a workload; these two also face clients over HTTP. */
const PROCESSES = ['gateway', 'resolver', 'auth', 'records', 'dynamic', 'analytics', 'webhooks']
const FRONT_DOORS = { gateway: 'PORT', resolver: 'SHORT_PORT' } as Record<string, string>
/**
 * Processes that keep scans on disk in TRANSPORT=nats mode (SCAN_SPOOL_DIR: only the resolver;
 * analytics and webhooks spool only in `bun start`). Their spool must outlive the pod: a
 * StatefulSet whose volumeClaimTemplate holds the directory.
 */
const SPOOLING = ['resolver']
/** The only process whose /metrics is on its public port: the gateway has no HEALTH_PORT listener. */
const METRICS_ON_PUBLIC_PORT = ['gateway']
/** Seconds between the process's own shutdown deadline (it logs and exits 1) and the kubelet's SIGKILL. */
const SHUTDOWN_MARGIN_S = 5
const KINDS = ['ConfigMap', 'Deployment', 'StatefulSet', 'Service', 'PodDisruptionBudget', 'HorizontalPodAutoscaler', 'Ingress', 'NetworkPolicy']

const skip = kubectlSkipReason()

/** The container port a probe or Service names, by name or by number. */
function portNumber(deployment: K8sObject, port: string | number): number | undefined {
  const ports: { name?: string; containerPort: number }[] = containerOf(deployment).ports ?? []
  return ports.find((p) => p.name === port || p.containerPort === port)?.containerPort
}

function checkBuild(dir: string) {
  const objects = () => build(dir)
  const deployments = () => workloadsOf(objects())
  const eachDeployment = (check: (d: K8sObject) => void) => () => {
    for (const deployment of deployments()) {
      try {
        check(deployment)
      } catch (error) {
        throw new Error(`${deployment.kind} ${deployment.metadata.name}: ${(error as Error).message}`)
      }
    }
  }

  it('builds, with only the kinds the deployment needs', () => {
    for (const object of objects()) {
      expect(KINDS).toContain(object.kind)
      expect(object.metadata.name).toBeTruthy()
      expect(object.metadata.labels?.['app.kubernetes.io/part-of']).toBe('library-records')
    }
  })

  it('names every process whose entry point holds record events among the record-event publishers', async () => {
    const holding = []
    for (const [name, entry] of Object.entries(ENTRY_POINTS)) if ((await Bun.file(join(ROOT, entry)).text()).includes('processRecordEvents')) holding.push(name)
    expect(holding.sort()).toEqual([...RECORD_EVENT_PUBLISHERS].sort())
  })

  it('has one workload per process, each running its own entry point', () => {
    expect(deployments().map((d) => d.metadata.name).sort()).toEqual([...PROCESSES].sort())
    for (const name of Object.keys(ENTRY_POINTS)) expect(workloadNamed(objects(), name)).toBeDefined()
    for (const name of PROCESSES) expect(Object.keys(ENTRY_POINTS)).toContain(name)
    for (const deployment of deployments()) {
      expect(containerOf(deployment).args).toEqual([deployment.metadata.name])
      expect(deployment.spec.template.spec.containers).toHaveLength(1)
    }
  })

  it('selects its own pods in every Deployment', eachDeployment((d) => {
    expect(selects(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true)
    const others = deployments().filter((o) => o !== d && selects(d.spec.selector.matchLabels, o.spec.template.metadata.labels))
    expect(others).toEqual([])
  }))

  it('rolls out one new pod at a time and never goes below the wanted count', eachDeployment((d) => {
    // A StatefulSet cannot surge: it replaces one pod at a time (the spooling resolver, whose HPA keeps two or more).
    if (d.kind === 'StatefulSet') return expect(d.spec.updateStrategy).toEqual({ type: 'RollingUpdate' })
    expect(d.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } })
  }))

  it('keeps every scan spool on a volume that outlives the pod, writable by the process, larger than its bound', () => {
    for (const d of deployments()) {
      const settings = settingsOf(d, objects())
      const dir = settings.get('SCAN_SPOOL_DIR')
      if (!SPOOLING.includes(d.metadata.name)) {
        expect({ name: d.metadata.name, dir }).toEqual({ name: d.metadata.name, dir: undefined })
        continue
      }
      // Unset, the spool would be ${DATA_DIR}/scan-spool under the read-only root filesystem.
      expect(dir).toBeTruthy()
      const mount = containerOf(d).volumeMounts.find((m: { mountPath: string }) => m.mountPath === dir)
      expect(mount).toBeDefined()
      // Not an emptyDir (gone with the pod): a PVC per pod, which the replacement of the same name mounts again.
      expect(d.kind).toBe('StatefulSet')
      expect((d.spec.template.spec.volumes ?? []).map((v: { name: string }) => v.name)).not.toContain(mount.name)
      const claim = d.spec.volumeClaimTemplates.find((c: K8sObject) => c.metadata.name === mount.name)
      expect(claim).toBeDefined()
      // Room for the bound as the pod's user sees it: ext4 keeps 5 % for root, and its journal and
      // inode tables take more (922 MiB of a 1 GiB volume were writable to uid 1000, against 900 MiB).
      expect(Number(settings.get('SCAN_SPOOL_MAX_MB')) * 1024 * 1024).toBeLessThanOrEqual(quantity(claim.spec.resources.requests.storage) * 0.85)
      expect(d.spec.persistentVolumeClaimRetentionPolicy).toEqual({ whenScaled: 'Retain', whenDeleted: 'Retain' })
      const pod = d.spec.template.spec
      expect(pod.securityContext.fsGroup).toBe(pod.securityContext.runAsGroup)
    }
  })

  it('keeps the record events a process holds on a writable volume of its pod, larger than their bound', eachDeployment((d) => {
    const settings = settingsOf(d, objects())
    const dataDir = settings.get('DATA_DIR')
    if (!RECORD_EVENT_PUBLISHERS.includes(d.metadata.name)) return expect(dataDir).toBeUndefined()
    // Unset, DATA_DIR is ./data under the read-only root filesystem (the image's /app).
    expect(isAbsolute(dataDir ?? '')).toBe(true)
    const spool = recordEventSpoolDir(dataDir!, d.metadata.name)
    const mounts = (containerOf(d).volumeMounts ?? []).filter((m: { mountPath: string }) => !relative(m.mountPath, spool).startsWith('..'))
    expect(mounts.map((m: { mountPath: string }) => m.mountPath)).toEqual([dataDir])
    expect(mounts[0].readOnly ?? false).toBe(false)
    const bound = Number(settings.get('SCAN_SPOOL_MAX_MB') ?? 1024) * 1024 * 1024
    const volume = (d.spec.template.spec.volumes ?? []).find((v: { name: string }) => v.name === mounts[0].name)
    const claim = (d.spec.volumeClaimTemplates ?? []).find((c: K8sObject) => c.metadata.name === mounts[0].name)
    // An emptyDir past its sizeLimit gets the pod evicted, and the held events go with it.
    const size = volume ? volume.emptyDir?.sizeLimit : claim?.spec.resources.requests.storage
    expect(bound).toBeLessThanOrEqual(quantity(size ?? 0) * 0.85) // as above: the spool's files are not all of a volume
  }))

  it('runs as a non-root user, read-only, without capabilities', eachDeployment((d) => {
    const pod = d.spec.template.spec
    expect(pod.securityContext.runAsNonRoot).toBe(true)
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0)
    expect(pod.automountServiceAccountToken).toBe(false)
    const container = containerOf(d)
    expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } })
  }))

  it('requests resources and limits them above the request', eachDeployment((d) => {
    const { requests, limits } = containerOf(d).resources
    for (const resource of ['cpu', 'memory']) {
      expect(quantity(requests[resource])).toBeGreaterThan(0)
      expect(quantity(limits[resource])).toBeGreaterThanOrEqual(quantity(requests[resource]))
    }
  }))

  it('probes /healthz for liveness and /readyz for readiness on a port the process listens on', eachDeployment((d) => {
    const container = containerOf(d)
    const settings = settingsOf(d, objects())
    const listener = FRONT_DOORS[d.metadata.name] === 'PORT' ? 'PORT' : 'HEALTH_PORT'
    const expected = Number(settings.get(listener))
    expect(expected).toBeGreaterThan(0)
    for (const [probe, path] of [['livenessProbe', '/healthz'], ['readinessProbe', '/readyz'], ['startupProbe', '/healthz']] as const) {
      expect(container[probe].httpGet.path).toBe(path)
      expect(portNumber(d, container[probe].httpGet.port)).toBe(expected)
    }
  }))

  it('listens on the port its setting names, for the processes that serve HTTP', () => {
    for (const [name, setting] of Object.entries(FRONT_DOORS)) {
      const deployment = workloadNamed(objects(), name)!
      expect(portNumber(deployment, 'http')).toBe(Number(settingsOf(deployment, objects()).get(setting)))
    }
  })

  it('gives a terminating pod time to leave the endpoints and to drain within the grace period', eachDeployment((d) => {
    const grace = d.spec.template.spec.terminationGracePeriodSeconds
    const preStop = containerOf(d).lifecycle?.preStop?.exec?.command
    if (d.metadata.name in FRONT_DOORS) {
      expect(preStop?.[0]).toBe('sleep')
      expect(Number(preStop[1])).toBeGreaterThan(0)
    } else expect(preStop).toBeUndefined()
    // The grace period counts the preStop hook; the process's deadline starts at SIGTERM, after it.
    // A stop that hangs must hit that deadline (log why, exit 1) before the kubelet's SIGKILL.
    const sleep = preStop ? Number(preStop[1]) : 0
    expect(grace).toBeGreaterThanOrEqual(sleep + SHUTDOWN_DEADLINE_MS / 1000 + SHUTDOWN_MARGIN_S)
  }))

  it('has a Service per Deployment whose target ports the pods expose', () => {
    const services = ofKind(objects(), 'Service')
    expect(services.map((s) => s.metadata.name).sort()).toEqual([...PROCESSES].sort())
    for (const service of services) {
      const targets = deployments().filter((d) => selects(service.spec.selector, d.spec.template.metadata.labels))
      expect(targets.map((d) => d.metadata.name)).toEqual([service.metadata.name])
      for (const port of service.spec.ports) expect(portNumber(targets[0]!, port.targetPort)).toBeDefined()
    }
  })

  it('has a PodDisruptionBudget per Deployment that lets one pod go at a time', () => {
    const budgets = ofKind(objects(), 'PodDisruptionBudget')
    expect(budgets.map((b) => b.metadata.name).sort()).toEqual([...PROCESSES].sort())
    for (const budget of budgets) {
      const targets = deployments().filter((d) => selects(budget.spec.selector.matchLabels, d.spec.template.metadata.labels))
      expect(targets.map((d) => d.metadata.name)).toEqual([budget.metadata.name])
      expect(budget.spec.maxUnavailable).toBe(1)
    }
  })

  it('scales the gateway and the resolver on CPU, and leaves their replica count to the autoscaler', () => {
    const autoscalers = ofKind(objects(), 'HorizontalPodAutoscaler')
    expect(autoscalers.map((a) => a.spec.scaleTargetRef.name).sort()).toEqual(Object.keys(FRONT_DOORS).sort())
    for (const hpa of autoscalers) {
      const target = workloadNamed(objects(), hpa.spec.scaleTargetRef.name)!
      expect(hpa.spec.scaleTargetRef.kind).toBe(target.kind)
      expect(target.spec.replicas).toBeUndefined()
      expect(hpa.spec.minReplicas).toBeLessThanOrEqual(hpa.spec.maxReplicas)
      expect(hpa.spec.metrics[0].resource.name).toBe('cpu')
    }
  })

  it('scales on CPU alone, a metric every cluster serves: an HPA that cannot read one of its metrics never scales down', () => {
    for (const hpa of ofKind(objects(), 'HorizontalPodAutoscaler')) expect(hpa.spec.metrics.map((m: any) => m.type)).toEqual(['Resource'])
  })

  it('has Prometheus scrape /metrics on the port where each process serves it, its probe port where it has one', eachDeployment((d) => {
    const annotations = d.spec.template.metadata.annotations ?? {}
    expect(annotations['prometheus.io/scrape']).toBe('true')
    expect(annotations['prometheus.io/path']).toBe('/metrics')
    const setting = METRICS_ON_PUBLIC_PORT.includes(d.metadata.name) ? 'PORT' : 'HEALTH_PORT'
    expect(Number(annotations['prometheus.io/port'])).toBe(Number(settingsOf(d, objects()).get(setting)))
    expect(portNumber(d, Number(annotations['prometheus.io/port']))).toBeDefined()
  }))

  it('scrapes no process through the port its public Service forwards to (but the gateway, which has no other)', () => {
    for (const service of ofKind(objects(), 'Service')) {
      const d = workloadNamed(objects(), service.metadata.name)!
      if (METRICS_ON_PUBLIC_PORT.includes(d.metadata.name)) continue
      const scraped = Number(d.spec.template.metadata.annotations['prometheus.io/port'])
      const forwarded = service.spec.ports.filter((p: { port: number }) => p.port === 80).map((p: { targetPort: string | number }) => portNumber(d, p.targetPort))
      expect({ service: service.metadata.name, forwarded: forwarded.includes(scraped) }).toEqual({ service: service.metadata.name, forwarded: false })
    }
  })

  it('runs every process over NATS, with the Redis limiter, and those with a store on MongoDB', () => {
    for (const deployment of deployments()) {
      const settings = settingsOf(deployment, objects())
      // The gateway and the resolver open no store: no STORE, so loadConfig does not ask them for MONGODB_URL.
      const store = deployment.metadata.name in FRONT_DOORS ? undefined : 'mongo'
      expect([deployment.metadata.name, settings.get('TRANSPORT'), settings.get('STORE'), settings.get('LIMITER')]).toEqual([deployment.metadata.name, 'nats', store, 'redis'])
    }
  })
}

if (skip) describe.skip(`kustomize builds (${skip})`, () => it('builds the base and the production overlay', () => {}))
else {
  describe(`kustomize base (${BASE})`, () => checkBuild(BASE))
  describe(`kustomize production overlay (${PRODUCTION})`, () => {
    checkBuild(PRODUCTION)

    it('puts every object in the library-records namespace', () => {
      for (const object of build(PRODUCTION)) expect(object.metadata.namespace).toBe('library-records')
    })

    it('runs the released image, not the local placeholder', () => {
      for (const deployment of workloadsOf(build(PRODUCTION))) expect(containerOf(deployment).image).toMatch(/^[^:]+\/library-records:[\w.-]+$/)
    })

    it('keeps two pods of every process, so one can be drained or replaced at a time', () => {
      for (const deployment of workloadsOf(build(PRODUCTION)))
        if (!(deployment.metadata.name in FRONT_DOORS)) expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2)
      for (const hpa of ofKind(build(PRODUCTION), 'HorizontalPodAutoscaler')) expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2)
    })

    it('publishes short links under an https domain', () => {
      expect(ofKind(build(PRODUCTION), 'ConfigMap')[0]!.data!.SHORT_BASE_URL).toMatch(/^https:\/\//)
    })

    it('routes the public only to the API (/v1, /docs) and to the short links, never to the gateway\'s /metrics or probes', () => {
      const ingresses = ofKind(build(PRODUCTION), 'Ingress')
      expect(ingresses).toHaveLength(1)
      const shortHost = new URL(ofKind(build(PRODUCTION), 'ConfigMap')[0]!.data!.SHORT_BASE_URL!).host
      const routes = ingresses[0]!.spec.rules.flatMap((rule: any) =>
        rule.http.paths.map((p: any) => `${rule.host === shortHost ? 'short' : 'api'} ${p.pathType} ${p.path} -> ${p.backend.service.name}:${p.backend.service.port.name}`))
      expect(routes.sort()).toEqual(['api Prefix /docs -> gateway:http', 'api Prefix /v1 -> gateway:http', 'short Prefix / -> resolver:http'])
      expect(ingresses[0]!.spec.defaultBackend).toBeUndefined()
    })
  })

  describe(`kustomize production with the request-rate autoscaler (${PRODUCTION_REQUEST_RATE})`, () => {
    it('is production, with the resolver scaled on its request rate (served by prometheus-adapter) beside CPU', () => {
      const hpa = (objects: K8sObject[]) => ofKind(objects, 'HorizontalPodAutoscaler').find((a) => a.metadata.name === 'resolver')!
      const metrics = hpa(build(PRODUCTION_REQUEST_RATE)).spec.metrics
      expect(metrics.map((m: any) => m.type)).toEqual(['Resource', 'Pods'])
      expect(metrics[0]).toEqual(hpa(build(PRODUCTION)).spec.metrics[0])
      expect([metrics[1].pods.metric.name, metrics[1].pods.target.type]).toEqual(['lr_http_requests_per_second', 'AverageValue'])
      // Everything else as production builds it.
      const withoutResolverHpa = (objects: K8sObject[]) => objects.filter((o) => o !== hpa(objects))
      expect(withoutResolverHpa(build(PRODUCTION_REQUEST_RATE))).toEqual(withoutResolverHpa(build(PRODUCTION)))
      expect({ ...hpa(build(PRODUCTION_REQUEST_RATE)).spec, metrics: undefined }).toEqual({ ...hpa(build(PRODUCTION)).spec, metrics: undefined })
    })
  })
}
