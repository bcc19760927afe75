import { createHmac } from 'node:crypto'

/**
 * The stack of this suite receives on 127.0.0.1 and retries fast: a delivery is retried after
 * 50, 100, 200, 200... ms and given up 2 s after it was stored; an attempt may take 1 s.
 */
export const WEBHOOKS_ENV = {
  WEBHOOKS_ALLOW_PRIVATE: '1',
  WEBHOOK_RETRY_BASE_MS: '50',
  WEBHOOK_RETRY_MAX_MS: '200',
  WEBHOOK_RETRY_WINDOW_S: '2',
  WEBHOOK_TIMEOUT_MS: '1000',
}

export interface Received {
  path: string
  id: string
  timestamp: string
  signature: string
  raw: string
  body: any
}

/**
 * A real HTTP receiver: `/ok/*` answers 204, `/fail<n>/*` 500 for the first n attempts of each
 * webhook-id, `/down/*` always 500, `/hang/*` never answers the first attempt of a webhook-id,
 * `/redirect/*` answers 307 to `/ok/redirected`.
 */
export function startReceiver() {
  const received: Received[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname
      const raw = await request.text()
      const h = request.headers
      const item = { path, id: h.get('webhook-id') ?? '', timestamp: h.get('webhook-timestamp') ?? '', signature: h.get('webhook-signature') ?? '', raw, body: JSON.parse(raw) }
      received.push(item)
      const failFirst = path.match(/^\/fail(\d+)\//)
      if (path.startsWith('/down/')) return new Response('no', { status: 500 })
      if (path.startsWith('/redirect/')) return new Response(null, { status: 307, headers: { location: '/ok/redirected' } })
      if (path.startsWith('/hang/') && received.filter((r) => r.id === item.id).length === 1) return new Promise<Response>(() => undefined)
      if (failFirst && received.filter((r) => r.id === item.id).length <= Number(failFirst[1])) return new Response('not yet', { status: 500 })
      return new Response(null, { status: 204 })
    },
  })
  return { url: (path: string) => `http://127.0.0.1:${server.port}${path}`, received, at: (path: string) => received.filter((r) => r.path === path), stop: () => server.stop(true) }
}

/** The Standard Webhooks check a receiver makes, written here from the spec, not taken from the product. */
export function verified(secret: string, r: Received): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  const expected = createHmac('sha256', key).update(`${r.id}.${r.timestamp}.${r.raw}`).digest('base64')
  return r.signature.split(' ').includes(`v1,${expected}`) && Math.abs(Date.now() / 1000 - Number(r.timestamp)) < 300
}
