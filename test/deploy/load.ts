/** Where load goes right now: the replica a Service would route to. */
export interface Targets {
  api(): string
  short(): string
}

export interface Load {
  /** Every request that did not get its expected status, with why. */
  failures: string[]
  /** Redirects (counted scans) per code. */
  scans: Map<string, number>
  requests(): number
  stop(): Promise<void>
}

const BROWSER = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1'

/**
 * Bounded load from the test process until stop(): six API workers cycling through reads,
 * creates and 50-item batches (so handlers are running whenever a service is stopped), and six
 * scan workers redirecting through the short-link resolver as a browser.
 */
export function startLoad(targets: Targets, key: string, codes: string[]): Load {
  const failures: string[] = []
  const scans = new Map<string, number>(codes.map((code) => [code, 0]))
  let requests = 0
  let stopped = false
  const headers = { 'x-api-key': key, 'content-type': 'application/json' }
  const check = async (what: string, expected: number, send: () => Promise<Response>) => {
    requests++
    try {
      const response = await send()
      await response.arrayBuffer()
      if (response.status !== expected) failures.push(`${what}: ${response.status}, expected ${expected}`)
      return response.status === expected
    } catch (error) {
      failures.push(`${what}: ${(error as Error).message}`)
      return false
    }
  }
  const post = (path: string, body: unknown) => fetch(`${targets.api()}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
  const batch = { qrcodes: Array.from({ length: 50 }, (_, n) => ({ url: `https://example.com/${n}`, name: `Batch ${n}` })) }
  const calls: (() => Promise<unknown>)[] = [
    () => check('GET /v1/qrcodes', 200, () => fetch(`${targets.api()}/v1/qrcodes?limit=5`, { headers })),
    () => check('POST /v1/qrcodes', 201, () => post('/v1/qrcodes', { url: 'https://example.com/a', name: 'A' })),
    () => check('GET /v1/dynqrcodes/{code}', 200, () => fetch(`${targets.api()}/v1/dynqrcodes/${codes[0]}`, { headers })),
    () => check('GET /v1/dynqrcodes/analytics', 200, () => fetch(`${targets.api()}/v1/dynqrcodes/analytics`, { headers })),
    () => check('POST /v1/qrcodes/batch', 201, () => post('/v1/qrcodes/batch', batch)),
  ]
  const apiWorker = async (offset: number) => {
    for (let i = offset; !stopped; i++) {
      await calls[i % calls.length]!()
      await Bun.sleep(2)
    }
  }
  const scanWorker = async (offset: number) => {
    for (let i = offset; !stopped; i++) {
      const code = codes[i % codes.length]!
      const short = targets.short()
      if (await check(`GET /${code}`, 302, () => fetch(`${short}/${code}`, { redirect: 'manual', headers: { 'user-agent': BROWSER } })))
        scans.set(code, scans.get(code)! + 1)
      await Bun.sleep(10)
    }
  }
  const workers = [0, 1, 2, 3, 4, 5].flatMap((n) => [apiWorker(n), scanWorker(n)])
  return {
    failures,
    scans,
    requests: () => requests,
    async stop() {
      stopped = true
      await Promise.all(workers)
    },
  }
}

/**
 * A long response (the CSV export of every record), in flight when its gateway gets SIGTERM:
 * its body is read only once `readAfter` resolves (the SIGTERM sent), so a fast export cannot
 * finish before it; a response cut short rejects while its body is read.
 */
export async function slowExport(api: string, key: string, readAfter: Promise<void>): Promise<{ status: number | string; rows: number; finishedAt: number }> {
  try {
    const response = await fetch(`${api}/v1/qrcodes/export`, { headers: { 'x-api-key': key } })
    await readAfter
    const body = await response.text()
    return { status: response.status, rows: body.split('\n').length - 1, finishedAt: performance.now() }
  } catch (error) {
    return { status: (error as Error).message, rows: 0, finishedAt: performance.now() }
  }
}
