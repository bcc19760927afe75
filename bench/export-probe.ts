// Probe: one static (or dynamic) export of N seeded rows, its rows/s, first byte and peak RSS (VmHWM), and
// the CPU time of the product's main thread (which answers every request) and of its other
// threads (the export Worker, the collector's helpers) during the export.
//   bun run bench/export-probe.ts static|dynamic N [N...]
import { adminIn, newDataDir, startOneProcess } from './product'
import { threadTicks } from './procs'
import { download, seed } from './scenarios/export'
import { rmSync } from 'node:fs'
import { fmt } from './report'

const [what = 'static', ...sizes] = process.argv.slice(2)
for (const size of sizes.map(Number)) {
  const dataDir = newDataDir()
  const admin = adminIn(dataDir)
  const { account_id } = await admin('account', 'create', '--email', `probe-${size}@bench.test`, '--tier', 'pro')
  const { key } = await admin('key', 'create', '--account', account_id, '--scope', 'personal')
  await seed(what, dataDir, `acct:${account_id}`, account_id, String(size))
  for (let run = 0; run < 2; run++) {
    const product = await startOneProcess(dataDir)
    try {
      const before = threadTicks(product.gatewayPid!)
      const got = await download(product, what === 'static' ? '/v1/qrcodes/export' : '/v1/dynqrcodes/export', key)
      const after = threadTicks(product.gatewayPid!)
      // The main thread is the one named after the process; threads that ended meanwhile are not counted.
      const main = Object.keys(after).find((thread) => thread.split(' ')[0] === String(product.gatewayPid))!
      const cpu = (threads: string[]) => threads.reduce((sum, t) => sum + after[t]! - (before[t] ?? 0), 0) / 100
      console.log(`${what} ${size}: ${Math.round(got.rows / got.seconds)} rows/s, first byte ${got.firstByteMs.toFixed(1)} ms, start ${fmt.mb(got.start)}, peak ${fmt.mb(got.hwm)} (MiB, as the bench reports); ` +
        `CPU: main thread ${cpu([main]).toFixed(2)} s, other threads ${cpu(Object.keys(after).filter((t) => t !== main)).toFixed(2)} s`)
    } finally {
      await product.stop()
    }
  }
  rmSync(dataDir, { recursive: true, force: true })
}
