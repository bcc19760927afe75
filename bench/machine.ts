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
