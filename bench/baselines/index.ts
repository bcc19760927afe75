import { join } from 'node:path'
import { freePort } from '../../test/harness/ports'
import { type Child, spawnChild, waitForHttp } from '../procs'

export interface Baseline {
  url: string
  child: Child
  stop(): Promise<void>
}

/** The bare Bun.serve 302 server, in its own process. */
export async function startBare302(location: string): Promise<Baseline> {
  const port = await freePort()
  const child = spawnChild('bare-302', ['bun', 'run', join(import.meta.dir, 'bare-302.ts')], { ...Bun.env, PORT: String(port), LOCATION: location })
  const url = `http://127.0.0.1:${port}`
  await waitForHttp(`${url}/x`, child, 'the bare 302 server', 302)
  return { url, child, stop: child.stop }
}

/** The bare Elysia server answering the captured bodies (a JSON file {list, create, batch}). */
export async function startBareElysia(bodiesFile: string): Promise<Baseline> {
  const port = await freePort()
  const child = spawnChild('bare-elysia', ['bun', 'run', join(import.meta.dir, 'bare-elysia.ts')], { ...Bun.env, PORT: String(port), BODIES: bodiesFile })
  const url = `http://127.0.0.1:${port}`
  await waitForHttp(`${url}/v1/dynqrcodes`, child, 'the bare Elysia server', 200)
  return { url, child, stop: child.stop }
}
