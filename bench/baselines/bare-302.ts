// Baseline of the resolver: a bare Bun.serve answering every request with the same 302 (same
// Location and Cache-Control as the product) and doing nothing else. PORT, LOCATION from env.
const location = Bun.env.LOCATION ?? 'https://example.com/'
const server = Bun.serve({
  port: Number(Bun.env.PORT ?? 0),
  hostname: '127.0.0.1',
  fetch: () => new Response(null, { status: 302, headers: { 'cache-control': 'private, no-store', location } }),
})
console.log(`[bare-302] serving on :${server.port}`)
process.on('SIGTERM', () => {
  server.stop(true)
  process.exit(0)
})
