import { Elysia } from 'elysia'
import { nanoid } from 'nanoid'
import { enterRequest } from '@lr/platform/request-context'

/** A request id the client may choose (the API document states it too). */
export const REQUEST_ID_PATTERN = /^[\w.:-]{1,128}$/

/**
 * Every response carries X-Request-Id: the client's when it sent a sane one, else a new one.
 * It travels on with every bus request (platform/src/request-context.ts) and in every log line.
 */
export const requestId = new Elysia({ name: 'request-id' }).onRequest(({ request, set }) => {
  const sent = request.headers.get('x-request-id')
  const id = sent && REQUEST_ID_PATTERN.test(sent) ? sent : nanoid(16)
  set.headers['x-request-id'] = id
  // Everything this request does from here (bus requests included) runs as part of it.
  enterRequest(id)
})
