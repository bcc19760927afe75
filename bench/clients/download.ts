export {}

// Export client, in its own process: GET a CSV export with a key, count its bytes and lines.
//   bun run bench/clients/download.ts URL KEY
// Prints {"status", "bytes", "lines", "seconds", "firstByteMs"}.
const [url, key] = process.argv.slice(2)
const started = performance.now()
// identity: the figures are the export's own, as a client without Accept-Encoding gets it (curl's
// default); fetch would otherwise ask for gzip/br and measure the compression too.
const response = await fetch(url!, { headers: { 'x-api-key': key!, 'accept-encoding': 'identity' } })
const firstByteMs = performance.now() - started
let bytes = 0
let lines = 0
for await (const chunk of response.body!) {
  bytes += chunk.length
  for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++
}
console.log(JSON.stringify({ status: response.status, bytes, lines, seconds: (performance.now() - started) / 1000, firstByteMs }))
