import { Elysia } from 'elysia'
import { AppError } from '@lr/proto'

/**
 * A request without a Host header, with one that names no host, or with two, is a 400 (RFC 9112
 * requires exactly one of HTTP/1.1 and every client sends one). Bun gives such a request a relative request.url, and Elysia's router reads a path
 * from a relative URL wrongly (`/v1/dynqrcodes/CODE` became a 404), so it is refused before
 * routing. The short-link resolver answers them (platform/src/request-url.ts).
 */
export const hostRequired = new Elysia({ name: 'host-required' }).onRequest(({ request }) => {
  const host = request.headers.get('host')
  if (request.url.charCodeAt(0) === 47)
    throw new AppError('bad_request', !host ? 'a Host header is required' : 'the Host header is not a valid host[:port]')
  // Bun joins repeated Host lines with ", " and builds the URL from the first: RFC 9112 §3.2
  // says to refuse them, as a proxy in front may have routed by the other one.
  if (host?.includes(',')) throw new AppError('bad_request', 'more than one Host header')
})
