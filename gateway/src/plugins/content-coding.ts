import { brotliCompress, brotliCompressSync, constants, createBrotliCompress, createGzip, gzip, gzipSync } from 'node:zlib'

export type Coding = 'br' | 'gzip'

/**
 * Fast levels: on a 1000-record page (250 KB of JSON) gzip 4 and brotli 4 each take about 2-3 ms
 * and give 36-41 KB; gzip 6 costs half as much again for 1% less, brotli 11 takes 650 ms.
 */
const GZIP_LEVEL = 4
const BROTLI_QUALITY = 4

/**
 * The coding to answer with, from `Accept-Encoding` (RFC 9110 §12.5.3): br when its q-value is
 * the highest, else gzip, else none (identity). `*` stands for a coding not named; q=0 refuses.
 */
export function negotiate(acceptEncoding: string | null): Coding | null {
  if (!acceptEncoding) return null
  const q = new Map<string, number>()
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';')
    if (!name) continue
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    const value = qParam ? Number(qParam.slice(2)) : 1
    q.set(name === 'x-gzip' ? 'gzip' : name, Number.isFinite(value) ? value : 0)
  }
  const qOf = (coding: Coding) => q.get(coding) ?? q.get('*') ?? 0
  const br = qOf('br')
  const gzip = qOf('gzip')
  if (br > 0 && br >= gzip) return 'br'
  return gzip > 0 ? 'gzip' : null
}

/** One whole body at once: the JSON answers, already in memory. */
export function compressSync(coding: Coding, data: Uint8Array): Uint8Array {
  if (coding === 'gzip') return gzipSync(data, { level: GZIP_LEVEL })
  return brotliCompressSync(data, {
    params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: data.byteLength },
  })
}

/**
 * A large body at once, off the event loop (zlib's thread pool): Swagger UI's 1.7 MB script took
 * 230 ms of the one thread that answers every request in brotli, 12 ms of it this way.
 */
export function compressAsync(coding: Coding, data: Uint8Array): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, out: Buffer) => (error ? reject(error) : resolve(new Uint8Array(out.buffer, out.byteOffset, out.byteLength)))
    if (coding === 'gzip') gzip(data, { level: GZIP_LEVEL }, done)
    else brotliCompress(data, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: data.byteLength } }, done)
  })
}

/**
 * A body that arrives in chunks (CSV exports). Each chunk is written into zlib and the next is not
 * taken until zlib has consumed it, and the readable side's queue stops the pipe while the client
 * reads slowly: memory stays at one chunk plus zlib's window, whatever the export's size.
 */
export function compressStream(coding: Coding, body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const zlib = coding === 'gzip'
    ? createGzip({ level: GZIP_LEVEL })
    : createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } })
  let ended: Promise<void>
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      start(controller) {
        zlib.on('data', (chunk: Buffer) => controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)))
        ended = new Promise((resolve, reject) => {
          zlib.once('end', resolve)
          zlib.once('error', reject)
        })
      },
      transform: (chunk) => new Promise<void>((resolve, reject) => zlib.write(chunk, (error) => (error ? reject(error) : resolve()))),
      flush() {
        zlib.end()
        return ended
      },
      // The client went away: free zlib's buffers now rather than at garbage collection.
      cancel() {
        zlib.destroy()
      },
    } as Transformer<Uint8Array, Uint8Array>),
  )
}
