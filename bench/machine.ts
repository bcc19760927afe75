import { cpus, totalmem } from 'node:os'
import { readFileSync } from 'node:fs'

const read = (path: string) => {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}

/** The machine the run measured, for the report. */
export async function describeMachine() {
  const cpuinfo = read('/proc/cpuinfo')
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown'
  const mhz = /^cpu MHz\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim()
  const os = /^PRETTY_NAME="?([^"\n]+)"?/m.exec(read('/etc/os-release'))?.[1] ?? process.platform
  const kernel = read('/proc/sys/kernel/osrelease').trim()
  const wrkVersion = await (async () => {
    const proc = Bun.spawn(['wrk', '-v'], { stdout: 'pipe', stderr: 'pipe' })
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
    await proc.exited
    return (/wrk [^\s]+/.exec(out + err)?.[0] ?? 'wrk').trim()
  })()
  const natsVersion = await (async () => {
    if (!Bun.which('nats-server')) return 'nats-server missing'
    const proc = Bun.spawn(['nats-server', '--version'], { stdout: 'pipe', stderr: 'pipe' })
    const out = await new Response(proc.stdout).text()
    await proc.exited
    return out.trim()
  })()
  return {
    cpu: `${model}${mhz ? ` (${Math.round(Number(mhz))} MHz)` : ''}`,
    cores: cpus().length,
    memory: `${(totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    os: `${os}, Linux ${kernel}`,
    bun: Bun.version,
    wrk: wrkVersion,
    nats: natsVersion,
    load: read('/proc/loadavg').split(' ').slice(0, 3).join(' '),
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  }
}

export type Machine = Awaited<ReturnType<typeof describeMachine>>

/** Busy and total clock ticks of every CPU since boot (/proc/stat's first line). */
function cpuTicks(): { busy: number; total: number } {
  const fields = read('/proc/stat').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  const total = fields.reduce((sum, n) => sum + n, 0)
  // idle and iowait are the 4th and 5th fields.
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total }
}

/**
 * Waits until the machine is quiet: less than `busyAtMost` of its CPU busy over half a second,
 * for at most `timeoutMs`; answers the busy share it last saw. What a scenario leaves behind
 * (the relay copying the last scenario's scans to SCANS, a webhooks worker reading them) then
 * does not run inside the next one's measurement.
 */
export async function machineQuiet(busyAtMost = 0.1, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const before = cpuTicks()
    await Bun.sleep(500)
    const after = cpuTicks()
    const busy = (after.busy - before.busy) / Math.max(1, after.total - before.total)
    if (busy <= busyAtMost || Date.now() >= deadline) return busy
  }
}
