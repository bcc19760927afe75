import { Elysia } from 'elysia'
import { nanoid } from 'nanoid'

const VALID_ID = /^[\w.:-]{1,128}$/

/** Every response carries X-Request-Id: the client's when it sent a sane one, else a new one. */
export const requestId = new Elysia({ name: 'request-id' }).onRequest(({ request, set }) => {
  const sent = request.headers.get('x-request-id')
  set.headers['x-request-id'] = sent && VALID_ID.test(sent) ? sent : nanoid(16)
})
