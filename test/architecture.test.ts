// The package boundaries of docs/architecture.md, checked on the sources themselves: every import
// a package makes is declared in its package.json, goes through the other package's exports
// (never its files), stays inside its own folder, and the contracts package imports no driver.
// And no module imports itself through a chain of others.
import { describe, expect, it } from 'bun:test'
import { Glob } from 'bun'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const ROOT = join(import.meta.dir, '..')

interface Pkg {
  name: string
  dir: string
  deps: Set<string>
  exports: Record<string, string>
}

function readPkg(dir: string): Pkg {
  const json = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8'))
  return {
    name: json.name,
    dir,
    deps: new Set([...Object.keys(json.dependencies ?? {}), ...Object.keys(json.devDependencies ?? {})]),
    exports: json.exports ?? {},
  }
}

const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
const packageDirs: string[] = root.workspaces.flatMap((pattern: string) =>
  pattern.endsWith('/*') ? [...new Glob(`${pattern}/package.json`).scanSync(ROOT)].map(dirname) : [pattern],
)
const packages = packageDirs.map(readPkg)
const byName = new Map(packages.map((p) => [p.name, p]))

/** The project's own TypeScript files, in packages or not (tests, bench, deploy). */
const files = [...new Glob('**/*.ts').scanSync(ROOT)].filter((f) => !f.includes('node_modules') && !f.endsWith('.d.ts'))
const packageOf = (file: string) => packages.find((p) => file.startsWith(`${p.dir}/`))

const IMPORT = /(?:^|[\s;])(?:import|export)\s(?:type\s)?[^'";]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;(])import\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s+['"]([^'"]+)['"]/gm

function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8')
  return [...text.matchAll(IMPORT)].map((m) => m[1] ?? m[2] ?? m[3]!)
}

const isBuiltin = (spec: string) => spec.startsWith('node:') || spec.startsWith('bun:') || spec === 'bun'
/** `@scope/name/sub` -> [`@scope/name`, `./sub`]; `name/sub` -> [`name`, `./sub`]. */
function splitBare(spec: string): [string, string] {
  const parts = spec.split('/')
  const n = spec.startsWith('@') ? 2 : 1
  const rest = parts.slice(n).join('/')
  return [parts.slice(0, n).join('/'), rest ? `./${rest}` : '.']
}

/** The file a `@lr/*` import lands on through the target's exports, or undefined when not exported. */
function exportedFile(target: Pkg, subpath: string): string | undefined {
  const exact = target.exports[subpath]
  if (exact) return join(target.dir, exact)
  for (const [key, value] of Object.entries(target.exports)) {
    if (!key.endsWith('*')) continue
    const prefix = key.slice(0, -1)
    if (subpath.startsWith(prefix)) return join(target.dir, value.replace('*', subpath.slice(prefix.length)))
  }
  return undefined
}

function resolveRelative(from: string, spec: string): string | undefined {
  const base = resolve(ROOT, dirname(from), spec)
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) {
    if (candidate.endsWith('.ts') && existsSync(candidate)) return relative(ROOT, candidate)
  }
  return undefined
}

const problems: string[] = []
const edges = new Map<string, Set<string>>()

for (const file of files) {
  const pkg = packageOf(file)
  const out = new Set<string>()
  edges.set(file, out)
  for (const spec of importsOf(file)) {
    if (spec.startsWith('.')) {
      const target = resolveRelative(file, spec)
      if (!target) continue // a non-TypeScript asset
      out.add(target)
      // A package's tests may use the repository's shared test harness (real servers on free ports).
      const sharedHarness = target.startsWith('test/harness/') && file.includes('/test/')
      if (pkg && !target.startsWith(`${pkg.dir}/`) && !sharedHarness) problems.push(`${file}: relative import "${spec}" leaves ${pkg.name}`)
      const targetPkg = packageOf(target)
      if (!pkg && targetPkg) problems.push(`${file}: reaches into ${targetPkg.name} by path ("${spec}"); import "${targetPkg.name}" instead`)
      continue
    }
    if (isBuiltin(spec)) {
      if (file.startsWith('proto/src/')) problems.push(`${file}: the contracts package imports the runtime "${spec}"`)
      continue
    }
    const [name, subpath] = splitBare(spec)
    if (file.startsWith('proto/src/') && name !== '@sinclair/typebox') problems.push(`${file}: the contracts package imports "${spec}"`)
    if (pkg && !pkg.deps.has(name) && name !== pkg.name) problems.push(`${file}: imports "${name}", which ${pkg.name}/package.json does not declare`)
    if (!pkg && !(name in (root.dependencies ?? {})) && !(name in (root.devDependencies ?? {}))) problems.push(`${file}: imports undeclared "${name}"`)
    const target = byName.get(name)
    if (!target) continue
    const landed = exportedFile(target, subpath)
    if (!landed || subpath.includes('/src/') || subpath.startsWith('./src')) {
      problems.push(`${file}: imports "${spec}", which ${name} does not export`)
      continue
    }
    out.add(landed)
  }
}

/** Tarjan's strongly connected components: each with more than one file is a cycle. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0
  const indices = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (v: string) => {
    indices.set(v, index)
    low.set(v, index++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indices.get(w)!))
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1 || graph.get(v)?.has(v)) found.push(component.sort())
    }
  }
  for (const v of graph.keys()) if (!indices.has(v)) visit(v)
  return found
}

describe('package boundaries', () => {
  it('finds the workspace packages and their sources', () => {
    expect(packages.map((p) => p.name)).toContain('@lr/proto')
    expect(packages.map((p) => p.name)).toContain('@lr/platform')
    expect(files.length).toBeGreaterThan(100)
  })

  it('every import is declared, goes through exports, stays in its package; contracts import no driver', () => {
    expect(problems).toEqual([])
  })

  it('the gateway package depends on no service', () => {
    const gateway = byName.get('@lr/gateway')!
    expect([...gateway.deps].filter((d) => ['@lr/auth', '@lr/records', '@lr/dynamic', '@lr/analytics', '@lr/library-records'].includes(d))).toEqual([])
  })

  it('the contracts package declares no runtime dependency but TypeBox', () => {
    expect([...byName.get('@lr/proto')!.deps]).toEqual(['@sinclair/typebox'])
  })
})

describe('import graph', () => {
  it('has no cycles, type-only imports included', () => {
    expect(cycles(edges)).toEqual([])
  })

  it('the cycle finder sees a cycle when there is one', () => {
    const graph = new Map([['a', new Set(['b'])], ['b', new Set(['c'])], ['c', new Set(['a'])], ['d', new Set(['a'])]])
    expect(cycles(graph)).toEqual([['a', 'b', 'c']])
  })
})
