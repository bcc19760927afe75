import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { dirname, join } from 'node:path'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { createLogger, installLogger } from '@lr/platform/log'
import { createGateway } from '../src/app'
import { scriptedBus } from './fake-bus'

installLogger(createLogger('gateway', 'warn'))

const UI_DIR = dirname(Bun.resolveSync('swagger-ui-dist/swagger-ui-bundle.js', import.meta.dir))

/** The answer as it travels (node:http does not decode bodies, unlike fetch). */
function get(port: number, path: string, headers: Record<string, string>, method = 'GET') {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }))
    })
    req.on('error', reject)
    req.end()
  })
}

/**
 * Swagger UI's script and style sheet (1.9 MB together) were sent unencoded whatever the browser
 * accepted; they now travel br- or gzip-encoded, as negotiated for the API's answers.
 */
describe('/docs/assets and Accept-Encoding', () => {
  let server: { stop(): Promise<void> | void; port: number }
  beforeAll(() => {
    const app = createGateway({ bus: scriptedBus().bus }).listen({ port: 0, hostname: '127.0.0.1' })
    server = { port: app.server!.port!, stop: async () => void (await app.stop()) }
  })
  afterAll(() => server?.stop())

  for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css']) {
    const original = readFileSync(join(UI_DIR, file))
    it(`sends ${file} br- or gzip-encoded as the client accepts, the same bytes once decoded`, async () => {
      const cases = [
        { accept: 'gzip, deflate, br', coding: 'br', decode: brotliDecompressSync },
        { accept: 'gzip', coding: 'gzip', decode: gunzipSync },
      ]
      for (const { accept, coding, decode } of cases) {
        const res = await get(server.port, `/docs/assets/${file}`, { 'accept-encoding': accept })
        expect([res.status, res.headers['content-encoding'], res.headers.vary]).toEqual([200, coding, 'Accept-Encoding'])
        expect(res.body.byteLength).toBeLessThan(original.byteLength / 3)
        expect(Buffer.from(decode(res.body)).equals(original)).toBe(true)
        const head = await get(server.port, `/docs/assets/${file}`, { 'accept-encoding': accept }, 'HEAD')
        expect([head.status, head.headers['content-encoding'], head.body.byteLength]).toEqual([200, coding, 0])
      }
    })

    it(`sends ${file} as it is without Accept-Encoding or when it refuses both codings`, async () => {
      const asked: Record<string, string>[] = [{}, { 'accept-encoding': 'identity' }, { 'accept-encoding': 'br;q=0, gzip;q=0' }]
      for (const headers of asked) {
        const res = await get(server.port, `/docs/assets/${file}`, headers)
        expect([res.status, res.headers['content-encoding'], res.headers.vary]).toEqual([200, undefined, 'Accept-Encoding'])
        expect(res.body.equals(original)).toBe(true)
      }
    })
  }

  it('never encodes the PNG icon (compressed already)', async () => {
    const res = await get(server.port, '/docs/assets/favicon-32x32.png', { 'accept-encoding': 'br, gzip' })
    expect([res.status, res.headers['content-type'], res.headers['content-encoding']]).toEqual([200, 'image/png', undefined])
    expect(res.body.equals(readFileSync(join(UI_DIR, 'favicon-32x32.png')))).toBe(true)
  })
})
