import { Elysia } from 'elysia'
import { isApiPath } from './api-key-auth'
import { appendVary } from './set-headers'

/**
 * `Cache-Control: private, no-cache`, `Vary: x-api-key` and `X-Content-Type-Options: nosniff` on
 * every /v1 answer (README "HTTP details"). Every /v1 answer is one library's, chosen by the key
 * alone: no shared cache may keep it, and a client's own cache revalidates (an ETag's 304 still
 * saves the body). An answer echoes what a client sent (ids in errors, names in a CSV): never
 * sniffed as HTML. Registered before CORS, whose preflight answer ends the request before the key
 * check: set in the key check, they had been missing from that one /v1 answer.
 */
export const apiCacheHeaders = new Elysia({ name: 'api-cache-headers' }).onRequest(({ request, set }) => {
  if (!isApiPath(request.url)) return
  set.headers['cache-control'] = 'private, no-cache'
  set.headers['x-content-type-options'] = 'nosniff'
  appendVary(set.headers, 'x-api-key')
})
