// Probe: one static (or dynamic) export of N seeded rows, its rows/s and peak RSS (VmHWM).
//   bun run bench/export-probe.ts static|dynamic N [N...]
import { adminIn, newDataDir, startOneProcess } from './product'
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
      const got = await download(product, what === 'static' ? '/v1/qrcodes/export' : '/v1/dynqrcodes/export', key)
      console.log(`${what} ${size}: ${Math.round(got.rows / got.seconds)} rows/s, start ${fmt.mb(got.start)}, peak ${fmt.mb(got.hwm)} (MiB, as the bench reports)`)
    } finally {
      await product.stop()
    }
  }
  rmSync(dataDir, { recursive: true, force: true })
}
