import type { AnyElysia } from 'elysia'
import { AppError } from '@lr/proto'
import { writeError } from './error-handler'

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

interface PathMethods {
  pattern: RegExp
  /** Path parameters in the pattern: the fewer, the more specific. */
  params: number
  methods: Set<string>
}

const escape = (segment: string) => segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** `/v1/qrcodes/:qr_id` -> /^\/v1\/qrcodes\/[^/]+$/: what the router would match at that place. */
const patternOf = (path: string) =>
  new RegExp(`^${path.split('/').map((s) => (s.startsWith(':') ? '[^/]+' : s === '*' ? '.*' : escape(s))).join('/')}$`)

function tableOf(routes: readonly { method: string; path: string }[]): PathMethods[] {
  const byPath = new Map<string, Set<string>>()
  for (const { method, path } of routes) {
    if (!byPath.has(path)) byPath.set(path, new Set())
    byPath.get(path)!.add(method.toUpperCase())
  }
  return [...byPath].map(([path, methods]) => ({ pattern: patternOf(path), params: path.split(/[:*]/).length - 1, methods }))
}

/**
 * The methods of the most specific routes at `path` (`/v1/qrcodes/export` is the export, not a
 * record: no code or id is ever a route word), with HEAD wherever GET is (Elysia answers HEAD
 * from the GET route) and OPTIONS (answered here); null when no route has this path at all.
 */
export function allowedMethods(table: readonly PathMethods[], path: string): string[] | null {
  const matches = table.filter((entry) => entry.pattern.test(path))
  if (matches.length === 0) return null
  const fewest = Math.min(...matches.map((entry) => entry.params))
  const methods = new Set(matches.filter((entry) => entry.params === fewest).flatMap((entry) => [...entry.methods]))
  if (methods.has('GET')) methods.add('HEAD')
  methods.add('OPTIONS')
  return ORDER.filter((method) => methods.has(method))
}

/**
 * A known path asked with a method it does not serve: 405 with `Allow` and the JSON error, not
 * 404 (an unknown path stays 404). OPTIONS on a known path is 204 with `Allow`. It hooks the
 * router's not-found, so on /v1 the key check (403) and the rate limit (429) come first, as for
 * a 404 (docs/decisions.md §10). A functional plugin: it reads the app's routes, all of them
 * registered by the time a request arrives, and must be used before the error handler.
 */
export const methodNotAllowed = <App extends AnyElysia>(app: App) => {
  let table: PathMethods[] | undefined
  return app.onError({ as: 'global' }, ({ code, request, set }) => {
    if (code !== 'NOT_FOUND') return
    table ??= tableOf(app.routes)
    const allow = allowedMethods(table, new URL(request.url).pathname)
    if (!allow) return
    set.headers.allow = allow.join(', ')
    if (request.method === 'OPTIONS') {
      set.status = 204
      return new Response(null, { status: 204 })
    }
    return writeError(new AppError('method_not_allowed', `method ${request.method} is not allowed on ${new URL(request.url).pathname}; allowed: ${allow.join(', ')}`), set)
  })
}
