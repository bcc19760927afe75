import { expect } from 'bun:test'
import { join } from 'node:path'
import { freePort } from '../../test/harness/ports'

const ROOT = join(import.meta.dir, '..', '..')

/** A real bun start on `dataDir` with `settings`, once it answers /readyz; `port` and `shortPort` are its listeners. */
export async function servingOn(dataDir: string, settings: Record<string, string> = {}) {
  const port = await freePort()
  const shortPort = await freePort()
  const env = { ...Bun.env, DATA_DIR: dataDir, ...settings, PORT: String(port), SHORT_PORT: String(shortPort), LOG_LEVEL: 'info' }
  const proc = Bun.spawn(['bun', 'run', join(ROOT, 'standalone/src/main.ts')], { cwd: ROOT, env, stdout: 'pipe', stderr: 'ignore' })
  const ready = () => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200, () => false)
  // The API answers before the short links are up and the stop handler is installed (a SIGTERM
  // before then ends the process by the signal, 143): the start-up line comes after both.
  let out = ''
  const decoder = new TextDecoder()
  const reader = proc.stdout.getReader()
  // The test's own timeout bounds the wait.
  while (!out.includes('one process: API on')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`bun start ended before its start-up line: ${out}`)
    out += decoder.decode(value, { stream: true })
  }
  reader.releaseLock()
  void proc.stdout.pipeTo(new WritableStream()).catch(() => undefined)
  expect(await ready()).toBe(true)
  return { proc, ready, port, shortPort }
}
