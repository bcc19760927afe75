import { cpSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { dirname, isAbsolute, join, relative } from 'node:path'
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

/** The directory every stage of deploy/Dockerfile works in (its WORKDIR). */
const WORKDIR = '/app'

/** A path in a stage's file system (`/app/x`, or `x` relative to WORKDIR) in the directory staging it. */
function inStage(stageDir: string, path: string): string {
  const inside = isAbsolute(path) ? relative(WORKDIR, path) : path
  if (inside.startsWith('..')) throw new Error(`deploy/Dockerfile: ${path} is outside ${WORKDIR}, which the staging does not follow`)
  return join(stageDir, inside)
}

/** COPY from the build context: every file under each source, minus .dockerignore. */
async function copyFromContext(words: string[], stageDir: string): Promise<void> {
  const patterns = (await dockerignorePatterns()).map((p) => new Bun.Glob(p))
  const dest = words.at(-1)!
  for (const source of words.slice(0, -1)) {
    const from = join(ROOT, source)
    const files = statSync(from).isDirectory() ? filesUnder(from) : [source]
    for (const file of files) {
      if (ignoredBy(patterns, file)) continue
      const to = statSync(from).isDirectory()
        ? join(inStage(stageDir, dest), relative(from, join(ROOT, file)))
        : dest.endsWith('/') ? join(inStage(stageDir, dest), source.split('/').at(-1)!) : inStage(stageDir, dest)
      mkdirSync(dirname(to), { recursive: true })
      cpSync(join(ROOT, file), to)
    }
  }
}

/**
 * What `docker build -f deploy/Dockerfile .` would put in the last stage's /app, built into
 * `target` without a Docker engine, stage by stage as Docker does: COPY from the build context
 * (minus .dockerignore) or from an earlier stage (`--from=<stage>`: that stage's files, symlinks
 * as they are), RUN in the stage's /app. The only command it runs is `bun install`; another one
 * fails the staging, so a new RUN line is staged on purpose or not at all. Earlier stages are
 * built in `${target}.<stage>` and removed.
 */
export async function stageImage(target: string): Promise<void> {
  const stages = new Map<string, string>()
  let stageDir = ''
  try {
    for (const [keyword, args] of await dockerfileInstructions()) {
      if (keyword === 'FROM') {
        const name = /\bAS\s+(\S+)$/i.exec(args)?.[1]
        stageDir = name ? `${target}.${name}` : target
        mkdirSync(stageDir, { recursive: true })
        if (name) stages.set(name, stageDir)
      } else if (keyword === 'WORKDIR' && args !== WORKDIR) throw new Error(`deploy/Dockerfile: WORKDIR ${args}; the staging follows ${WORKDIR} only`)
      else if (keyword === 'COPY' && args.startsWith('--from=')) {
        const [flag, source, dest] = args.split(/\s+/)
        const from = stages.get(flag!.slice('--from='.length))
        if (!from || !source || !dest) throw new Error(`deploy/Dockerfile: COPY ${args} names no earlier stage`)
        cpSync(inStage(from, source), inStage(stageDir, dest), { recursive: true, verbatimSymlinks: true })
      } else if (keyword === 'COPY') await copyFromContext(args.split(/\s+/), stageDir)
      else if (keyword === 'RUN') {
        if (!args.startsWith('bun install')) throw new Error(`deploy/Dockerfile: RUN ${args}; the staging runs only bun install`)
        const run = Bun.spawnSync(args.split(/\s+/), { cwd: stageDir, stdout: 'pipe', stderr: 'pipe' })
        if (run.exitCode !== 0) throw new Error(`RUN ${args} in the staged image failed:\n${run.stderr}`)
      }
    }
  } finally {
    for (const dir of stages.values()) if (dir !== target) rmSync(dir, { recursive: true, force: true })
  }
}

/** The numeric user and group the image runs as (its last USER, `uid[:gid]`). */
export async function imageUser(): Promise<{ uid: number; gid: number }> {
  const user = (await dockerfileInstructions()).filter(([keyword]) => keyword === 'USER').at(-1)?.[1] ?? ''
  const [uid, gid = uid] = user.split(':').map(Number)
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) throw new Error(`deploy/Dockerfile: USER ${user} is not numeric`)
  return { uid: uid!, gid: gid! }
}
