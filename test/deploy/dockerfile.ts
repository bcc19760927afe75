import { cpSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { ROOT } from './manifests'

/** deploy/Dockerfile as [KEYWORD, arguments], continuation lines joined, comments dropped. */
export async function dockerfileInstructions(): Promise<(readonly [string, string])[]> {
  const text = await Bun.file(join(ROOT, 'deploy/Dockerfile')).text()
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/)
      return [keyword!.toUpperCase(), rest.join(' ')] as const
    })
}

/** The patterns of .dockerignore. */
export async function dockerignorePatterns(): Promise<string[]> {
  const text = await Bun.file(join(ROOT, '.dockerignore')).text()
  return text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
}

/** Docker's rule: a path is left out when it, or any directory above it, matches a pattern. */
function ignoredBy(patterns: Bun.Glob[], path: string): boolean {
  const parts = path.split('/')
  return parts.some((_, i) => patterns.some((glob) => glob.match(parts.slice(0, i + 1).join('/'))))
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
}

/**
 * What `docker build -f deploy/Dockerfile .` would put in /app, staged into `target` without a
 * Docker engine: every COPY from the build context, minus .dockerignore. The dependencies are
 * then installed the way the Dockerfile installs them (by the caller).
 */
export async function stageImage(target: string): Promise<void> {
  const patterns = (await dockerignorePatterns()).map((p) => new Bun.Glob(p))
  for (const [keyword, args] of await dockerfileInstructions()) {
    if (keyword !== 'COPY' || args.startsWith('--from')) continue
    const words = args.split(/\s+/)
    const dest = words.at(-1)!
    for (const source of words.slice(0, -1)) {
      const from = join(ROOT, source)
      const files = statSync(from).isDirectory() ? filesUnder(from) : [source]
      for (const file of files) {
        if (ignoredBy(patterns, file)) continue
        const to = statSync(from).isDirectory()
          ? join(target, dest, relative(from, join(ROOT, file)))
          : join(target, dest.endsWith('/') ? join(dest, source.split('/').at(-1)!) : dest)
        mkdirSync(dirname(to), { recursive: true })
        cpSync(join(ROOT, file), to)
      }
    }
  }
}
