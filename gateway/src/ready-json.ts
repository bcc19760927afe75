/**
 * An answer whose JSON a service already serialised (Bus.requestJson): the gateway sends those
 * bytes as they are instead of parsing and serialising a page of records again. The bytes are
 * remembered beside the Response so compression can read them at once.
 */
const bodies = new WeakMap<Response, Uint8Array>()

/** The content type Elysia gives the JSON it serialises itself, so both kinds of answer look alike. */
const JSON_CONTENT_TYPE = 'application/json;charset=utf-8'

export function readyJson(body: Uint8Array): Response {
  const response = new Response(body, { headers: { 'content-type': JSON_CONTENT_TYPE } })
  bodies.set(response, body)
  return response
}

/** The JSON bytes of a readyJson answer; undefined for any other Response. */
export const readyJsonBytes = (response: Response): Uint8Array | undefined => bodies.get(response)
