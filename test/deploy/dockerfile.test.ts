import { describe, expect, it } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ENTRY_POINTS } from '../../deploy/entry-points'
import { dockerfileInstructions, dockerignorePatterns } from './dockerfile'
import { ROOT } from './manifests'

// No Docker engine runs where the tests do: the Dockerfile is checked as text (image.test.ts
// stages and runs what it would copy).
const instructions = await dockerfileInstructions()
const ignored = await dockerignorePatterns()
const all = (keyword: string) => instructions.filter(([k]) => k === keyword).map(([, args]) => args)
const last = (keyword: string) => all(keyword).at(-1)
/** COPY sources from the build context (not from another stage). */
const copied = all('COPY').filter((args) => !args.startsWith('--from')).flatMap((args) => args.split(/\s+/).slice(0, -1))

const workspaces = (): string[] => {
  const patterns: string[] = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).workspaces
  return patterns.flatMap((p) => (p.endsWith('/*') ? readdirSync(join(ROOT, p.slice(0, -2))).map((d) => `${p.slice(0, -2)}/${d}`) : [p]))
}

describe('deploy/Dockerfile', () => {
  it('builds on the official Bun image pinned to the Bun that runs these tests', () => {
    const images = all('FROM').map((args) => args.split(/\s+/)[0])
    expect(images.length).toBeGreaterThan(0)
    for (const image of images) expect(image).toMatch(/^oven\/bun:\d+\.\d+\.\d+(-slim|-debian|-alpine)?$/)
    const versions = new Set(images.map((image) => /:(\d+\.\d+\.\d+)/.exec(image!)![1]))
    expect([...versions]).toEqual([Bun.version])
  })

  it('runs as a numeric non-root user', () => {
    const user = last('USER')
    expect(user).toMatch(/^\d+(:\d+)?$/)
    expect(Number(user!.split(':')[0])).toBeGreaterThan(0)
  })

  it('installs only the locked production dependencies', () => {
    expect(all('RUN')).toContain('bun install --frozen-lockfile --production')
  })

  it('copies every workspace manifest before installing, so the lockfile matches', () => {
    const install = instructions.findIndex(([k, args]) => k === 'RUN' && args.includes('bun install'))
    const before = instructions.slice(0, install).filter(([k]) => k === 'COPY').flatMap(([, args]) => args.split(/\s+/).slice(0, -1))
    for (const file of ['package.json', 'bun.lock', ...workspaces().map((w) => `${w}/package.json`)]) expect(before).toContain(file)
  })

  it('copies only what the processes run: sources, manifests, the entry point', () => {
    const allowed = /^(package\.json|bun\.lock|bunfig\.toml|tsconfig\.json|proto\/|platform\/|gateway\/|services\/|deploy\/entry\.ts|deploy\/entry-points\.ts|(proto|platform|gateway|standalone|services\/[\w-]+)\/package\.json)$/
    for (const source of copied) expect(source).toMatch(allowed)
    for (const entry of Object.values(ENTRY_POINTS)) expect(copied.some((source) => entry.startsWith(source))).toBe(true)
  })

  it('leaves tests, data, dependencies and git out of the build context', () => {
    for (const pattern of ['**/node_modules', '.git', 'test', '**/test', 'data', '**/*.sqlite']) expect(ignored).toContain(pattern)
  })

  it('sets TRANSPORT=nats, without which every process of the image refuses to start', () => {
    expect(all('ENV').flatMap((args) => args.split(/\s+/))).toContain('TRANSPORT=nats')
  })

  it('chooses the process by argument: ENTRYPOINT runs deploy/entry.ts, CMD names a process', () => {
    expect(JSON.parse(last('ENTRYPOINT')!)).toEqual(['bun', 'run', 'deploy/entry.ts'])
    const [process] = JSON.parse(last('CMD')!)
    expect(Object.keys(ENTRY_POINTS)).toContain(process)
    expect(existsSync(join(ROOT, 'deploy/entry.ts'))).toBe(true)
  })
})

describe('deploy/entry.ts', () => {
  it('refuses an unknown process with exit code 2 and names the known ones', async () => {
    const proc = Bun.spawn(['bun', 'run', join(ROOT, 'deploy/entry.ts'), 'nope'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
    expect(code).toBe(2)
    for (const name of Object.keys(ENTRY_POINTS)) expect(stderr).toContain(name)
  })
})
