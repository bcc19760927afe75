import { Elysia } from 'elysia'
import { AppError } from '@lr/proto'

/**
 * A request without a Host header is a 400 (RFC 9112 requires one of HTTP/1.1 and every client
 * sends one). Bun gives such a request a relative request.url, and Elysia's router reads a path
 * from a relative URL wrongly (`/v1/dynqrcodes/CODE` became a 404), so it is refused before
 * routing. The short-link resolver answers them (platform/src/request-url.ts).
 */
export const hostRequired = new Elysia({ name: 'host-required' }).onRequest(({ request }) => {
  if (request.url.charCodeAt(0) === 47) throw new AppError('bad_request', 'a Host header is required')
})
