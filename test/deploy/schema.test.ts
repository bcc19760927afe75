import { describe, expect, it } from 'bun:test'
import { BASE, build, kubectlSkipReason, PRODUCTION, PRODUCTION_REQUEST_RATE } from './manifests'

/**
 * Every object of both builds against the Kubernetes JSON schemas of the `kubernetes-models`
 * package (one class per kind under `kubernetes-models/<apiVersion>`, each with `.validate()`,
 * which throws on the first violation).
 */
type ModelClass = new (data: unknown) => { validate(): void }

async function loadModels(): Promise<((apiVersion: string, kind: string) => Promise<ModelClass | undefined>) | string> {
  const probe = 'kubernetes-models/apps/v1' // a variable keeps tsc from requiring the package's types
  try {
    await import(probe)
  } catch {
    const reason = 'kubernetes-models is not installed (a devDependency of the root package.json)'
    if (Bun.env.CI === 'true') throw new Error(`${reason}; CI must validate the manifests`)
    return reason
  }
  return async (apiVersion, kind) => {
    const module = (await import(`kubernetes-models/${apiVersion}`).catch(() => ({}))) as Record<string, ModelClass>
    return module[kind]
  }
}

const kubectlSkip = kubectlSkipReason()
const models = await loadModels()
const skip = kubectlSkip ?? (typeof models === 'string' ? models : null)

if (skip || typeof models === 'string') describe.skip(`Kubernetes schemas (${skip})`, () => it('validates every object of both builds', () => {}))
else
  describe('Kubernetes schemas (kubernetes-models)', () => {
    for (const dir of [BASE, PRODUCTION, PRODUCTION_REQUEST_RATE])
      it(`accepts every object of ${dir}`, async () => {
        for (const object of build(dir)) {
          const Model = await models(object.apiVersion, object.kind)
          if (!Model) throw new Error(`no schema for ${object.apiVersion} ${object.kind} (${object.metadata.name})`)
          try {
            new Model(object).validate()
          } catch (error) {
            throw new Error(`${dir}: ${object.kind} ${object.metadata.name} is invalid: ${(error as Error).message}`)
          }
        }
      })

    it('rejects an object that breaks the schema (the validator really runs)', async () => {
      const Deployment = (await models('apps/v1', 'Deployment'))!
      const broken = { metadata: { name: 'x' }, spec: { selector: {}, template: { spec: { containers: [{ image: 'x', ports: [{ containerPort: 'http' }] }] } } } }
      expect(() => new Deployment(broken).validate()).toThrow()
    })
  })
