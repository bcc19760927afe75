import type { AnyElysia } from 'elysia'
import { AppError } from '@lr/proto'
import { writeError } from './error-handler'

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']

/** The same path with its trailing slash toggled: Elysia's router takes both (no strictPath). */
const loose = (path: string) => (path.endsWith('/') ? path.slice(0, -1) : `${path}/`)

/**
 * Whether a route serves `method` on `path`. A path with routes of its own (no parameters:
 * `/v1/qrcodes/batch`) is served only by them: a param route's pattern matches it too, but no id
 * or code is ever a route word, so a lookup there could only be a 404 (the param routes refuse
 * route words: library.ts). Otherwise the dynamic router is asked, as Elysia 1.4 asks it.
 */
function routed(app: AnyElysia, method: string, path: string): boolean {
  const { static: fixed, http } = app.router
  const methods = fixed[path] ?? fixed[loose(path)]
  if (methods) return method in methods || 'ALL' in methods
  return (http.find(method, path) ?? http.find('ALL', path)) !== null
}

/**
 * The methods the router serves at `path`, with HEAD wherever GET is (Elysia answers HEAD from
 * the GET route) and OPTIONS (answered here); null when it serves none.
 */
function allowedAt(app: AnyElysia, path: string): string[] | null {
  const methods = METHODS.filter((method) => routed(app, method, path))
  if (methods.length === 0) return null
  if (methods.includes('GET')) methods.splice(1, 0, 'HEAD')
  return [...methods, 'OPTIONS']
}

/**
 * A known path asked with a method it does not serve: 405 with `Allow` and the JSON error, not
 * 404 (an unknown path stays 404). OPTIONS on a known path is 204 with `Allow`. It hooks the
 * router's not-found, so on /v1 the key check (403) and the rate limit (429) come first, as for
 * a 404 (docs/decisions.md §10). A functional plugin: it asks the router of the app it is used
 * on, which holds every route by the time a request arrives; it must be used before the error handler.
 */
export const methodNotAllowed = <App extends AnyElysia>(app: App) =>
  app.onError({ as: 'global' }, ({ code, request, path, set }) => {
    if (code !== 'NOT_FOUND') return
    const allow = allowedAt(app, path)
    if (!allow) return
    set.headers.allow = allow.join(', ')
    if (request.method === 'OPTIONS') {
      set.status = 204
      return new Response(null, { status: 204 })
    }
    return writeError(new AppError('method_not_allowed', `method ${request.method} is not allowed on ${path}; allowed: ${allow.join(', ')}`), set)
  })
