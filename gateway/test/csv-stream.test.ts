import { describe, expect, it } from 'bun:test'
import { join } from 'node:path'

/** The lines a child writes, as it writes them. */
async function* linesOf(stream: ReadableStream<Uint8Array>) {
  const decoder = new TextDecoder()
  let buffered = ''
  for await (const bytes of stream) {
    buffered += decoder.decode(bytes, { stream: true })
    const lines = buffered.split('\n')
    buffered = lines.pop()!
    yield* lines
  }
  if (buffered) yield buffered
}

describe('a CSV export whose chunk fails after the 200', () => {
  it('cuts the body short (the client sees a transfer error, not a whole CSV) and logs one JSON error line with the request id, no raw stack', async () => {
    const child = Bun.spawn(['bun', join(import.meta.dir, 'fixtures/export-cut-short.ts')], { stdout: 'pipe', stderr: 'pipe' })
    try {
      const stdout = linesOf(child.stdout)
      const { port } = JSON.parse((await stdout.next()).value!)
      const curl = Bun.spawn(['curl', '-s', '-o', '/dev/null', '-w', '%{http_code} %{size_download}', '-H', 'x-request-id: req-cut', `http://127.0.0.1:${port}/`], { stdout: 'pipe' })
      const [written, exit] = await Promise.all([new Response(curl.stdout).text(), curl.exited])
      const [status, size] = written.split(' ').map(Number)
      expect(status).toBe(200)
      expect(size).toBe(600_004) // the first chunk, and nothing after it
      expect([18, 56]).toContain(exit) // partial file / failure receiving: the chunked body never ended
      const line = JSON.parse((await stdout.next()).value!)
      expect(line).toMatchObject({ level: 'error', msg: 'export cut short: a chunk failed after the 200 was sent', request_id: 'req-cut', subject: 'records.v1.export', sent_chars: 600_004 })
      expect(JSON.stringify(line)).toContain('did not answer in time')
    } finally {
      child.kill()
      await child.exited
    }
    expect(await new Response(child.stderr).text()).toBe('')
  })
})
