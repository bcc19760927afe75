import type { Stack } from './stack'

/**
 * A loopback HTTP listener in front of a stack's `request`, for clients that need a URL: a
 * generated client run as its own process, a browser. Requests pass through unchanged.
 */
export function listen(stack: Stack): { url: string; stop(): Promise<void> } {
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer()
      return stack.request(url.pathname + url.search, { method: request.method, headers: request.headers, body })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) }
}
