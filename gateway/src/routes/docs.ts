import { dirname, join } from 'node:path'
import { Elysia } from 'elysia'
import { swagger } from '@elysiajs/swagger'
import { AppError } from '@lr/proto'
import { finishDocument, type GeneratedDocument } from './openapi-document'
import { requestUrlOf } from '@lr/platform/request-url'
import { compressAsync, negotiate } from '../plugins/content-coding'

const info = {
  title: 'Library Records API',
  version: '1.0.0',
  description: 'Static and dynamic QR code records, CSV exports and scan analytics. Every `/v1` request sends its API key in `x-api-key`; the key decides the library. Timestamps are Unix epoch seconds, UTC.',
}

/** Swagger UI's files, served from the installed swagger-ui-dist: the page needs no internet. */
const UI_DIR = dirname(Bun.resolveSync('swagger-ui-dist/swagger-ui-bundle.js', import.meta.dir))
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
}
const ASSET_HEADERS = { 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' }

/**
 * The text files (1.7 MB of script, 190 KB of CSS) in the coding the client accepts, made once
 * per file and coding and kept: sent as they are, the page cost a browser 1.9 MB where br makes
 * it 0.47 MB (docs/decisions.md §9). The PNGs are compressed already.
 */
const encoded = new Map<string, Promise<Uint8Array>>()
async function assetResponse(file: string, type: string, acceptEncoding: string | null): Promise<Response> {
  const path = join(UI_DIR, file)
  if (type.startsWith('image/')) return new Response(Bun.file(path), { headers: { 'content-type': type, ...ASSET_HEADERS } })
  const headers = { 'content-type': type, vary: 'Accept-Encoding', ...ASSET_HEADERS }
  const coding = negotiate(acceptEncoding)
  if (!coding) return new Response(Bun.file(path), { headers })
  const key = `${coding} ${file}`
  let body = encoded.get(key)
  if (!body) {
    body = Bun.file(path).bytes().then((bytes) => compressAsync(coding, bytes))
    encoded.set(key, body)
    body.catch(() => encoded.delete(key)) // a failure is not kept: the next request tries again
  }
  return new Response(await body, { headers: { ...headers, 'content-encoding': coding } })
}

/**
 * The page, with URLs relative to itself so it also works behind a path prefix: from `/docs`
 * they start with `docs/`, from `/docs/` they do not.
 */
const page = (base: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${info.title}</title>
  <link rel="stylesheet" href="${base}assets/swagger-ui.css">
  <link rel="icon" type="image/png" sizes="32x32" href="${base}assets/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${base}assets/swagger-ui-bundle.js"></script>
  <script>
    // validatorUrl null: no badge fetched from validator.swagger.io.
    window.ui = SwaggerUIBundle({ url: '${base}json', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null })
  </script>
</body>
</html>`
/**
 * No other site may frame the page (a user pastes a key into "Try it out": a framing page could
 * overlay it), in both spellings browsers read.
 */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
}
const html = (base: string) => new Response(page(base), { headers: PAGE_HEADERS })
const hidden = { detail: { hide: true } }

/**
 * /docs/json: @elysiajs/swagger generates the document from every route's `detail`
 * (openapi.ts), and finishDocument makes it the served OpenAPI 3.1 document. The routes are
 * fixed once the gateway serves, so the first finished document is the one served from then on.
 * The hook is local, so it wraps only the plugin's own routes.
 */
function openApiDocument() {
  let finished: ReturnType<typeof finishDocument> | undefined
  return new Elysia({ name: 'openapi-document' })
    .onAfterHandle(({ response }) => (response instanceof Response ? undefined : (finished ??= finishDocument(response as GeneratedDocument))))
    .use(swagger({ path: '/docs', specPath: '/docs/json', provider: 'swagger-ui', exclude: ['/healthz', '/readyz'], documentation: { info } }))
}

/**
 * /docs and /docs/: Swagger UI from /docs/assets. These replace the plugin's own page, which
 * loads Swagger UI from a CDN (Elysia lets a later route replace one of the same method and
 * path). Public, like the document: the auth plugin guards /v1 only. A new instance per
 * gateway: the swagger plugin reads the routes of the app it was added to.
 */
export const docsRoutes = () => new Elysia({ name: 'docs' })
  .use(openApiDocument())
  // Elysia answers /docs/ with this route too; the page's relative URLs must follow the slash.
  .get('/docs', ({ request }) => html(requestUrlOf(request.url).pathname.endsWith('/') ? '' : 'docs/'), hidden)
  .get('/docs/assets/:file', ({ params, request }) => {
    // Own keys only: `ASSETS['constructor']` is Object's, and served a missing file as a 500 page with a stack and paths.
    const type = Object.hasOwn(ASSETS, params.file) ? ASSETS[params.file] : undefined
    if (!type) throw new AppError('not_found', `no file ${JSON.stringify(params.file.slice(0, 100))} under /docs/assets`)
    return assetResponse(params.file, type, request.headers.get('accept-encoding'))
  }, hidden)
