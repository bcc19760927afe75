import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** What one wrk run measured. Latencies in milliseconds. */
export interface WrkResult {
  rps: number
  p50: number
  p99: number
  /** Completed responses ("N requests in Ts"); requests still in flight at the end are not in it. */
  requests: number
  seconds: number
  /** Responses whose status was not 2xx or 3xx. */
  bad: number
  socketErrors: { connect: number; read: number; write: number; timeout: number }
  raw: string
}

export interface WrkRun {
  url: string
  seconds: number
  connections: number
  headers?: Record<string, string>
  /** A POST with this body (sent through a generated Lua script). */
  post?: { body: string; contentType?: string }
}

const run = async (argv: string[]) => {
  const proc = Bun.spawn(argv, { stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

/** Installs Debian's wrk when it is missing (apt-get, through sudo unless root). */
export async function ensureWrk(): Promise<string> {
  const found = Bun.which('wrk')
  if (found) return found
  console.log('[bench] wrk is missing: installing the Debian package')
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n']
  const env = { ...Bun.env, DEBIAN_FRONTEND: 'noninteractive' }
  const install = () => Bun.spawn([...sudo, 'apt-get', 'install', '-y', '-q', 'wrk'], { stdout: 'inherit', stderr: 'inherit', env }).exited
  if ((await install()) !== 0) {
    await Bun.spawn([...sudo, 'apt-get', 'update', '-q'], { stdout: 'inherit', stderr: 'inherit', env }).exited
    if ((await install()) !== 0) throw new Error('could not install wrk: run `apt-get install -y wrk` (as root) and retry')
  }
  const installed = Bun.which('wrk')
  if (!installed) throw new Error('wrk is still not on PATH after apt-get install')
  return installed
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }
const toMs = (value: string, unit: string) => Number(value) * UNIT_MS[unit]!

/** Parses wrk's `--latency` report. */
export function parseWrk(raw: string): WrkResult {
  const percentile = (p: string) => {
    const match = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s|m|h)\\s*$`, 'm').exec(raw)
    return match ? toMs(match[1]!, match[2]!) : Number.NaN
  }
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m|h)/.exec(raw)
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(raw)
  if (!total || !rps) throw new Error(`cannot parse wrk's output:\n${raw}`)
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(raw)
  const bad = /Non-2xx or 3xx responses: (\d+)/.exec(raw)
  return {
    rps: Number(rps[1]),
    p50: percentile('50'),
    p99: percentile('99'),
    requests: Number(total[1]),
    seconds: toMs(total[2]!, total[3]!) / 1000,
    bad: bad ? Number(bad[1]) : 0,
    socketErrors: socket
      ? { connect: Number(socket[1]), read: Number(socket[2]), write: Number(socket[3]), timeout: Number(socket[4]) }
      : { connect: 0, read: 0, write: 0, timeout: 0 },
    raw,
  }
}

/** One wrk run from its own process: one thread, `connections` connections, latency percentiles. */
export async function wrk(spec: WrkRun): Promise<WrkResult> {
  const argv = ['wrk', '-t1', `-c${spec.connections}`, `-d${Math.max(1, Math.round(spec.seconds))}s`, '--latency', '--timeout', '5s']
  for (const [name, value] of Object.entries(spec.headers ?? {})) argv.push('-H', `${name}: ${value}`)
  let dir: string | undefined
  if (spec.post) {
    dir = mkdtempSync(join(tmpdir(), 'lr-bench-wrk-'))
    const script = join(dir, 'post.lua')
    if (spec.post.body.includes(']==]')) throw new Error('body cannot be embedded in the Lua script')
    writeFileSync(
      script,
      `wrk.method = "POST"\nwrk.headers["Content-Type"] = "${spec.post.contentType ?? 'application/json'}"\nwrk.body = [==[${spec.post.body}]==]\n`,
    )
    argv.push('-s', script)
  }
  argv.push(spec.url)
  try {
    const { stdout, stderr, code } = await run(argv)
    if (code !== 0) throw new Error(`wrk exited ${code}: ${stderr}${stdout}`)
    return parseWrk(stdout)
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true })
  }
}

/** A warm-up run (figures dropped), then the measured run. */
export async function measure(spec: Omit<WrkRun, 'seconds'>, seconds: number, warmup: number): Promise<WrkResult> {
  if (warmup > 0) await wrk({ ...spec, seconds: warmup })
  return wrk({ ...spec, seconds })
}

/** A browser's User-Agent: bots are redirected but not counted, so the scans must not look like one. */
export const BROWSER_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'
