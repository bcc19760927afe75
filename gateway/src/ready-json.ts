import { JSON_CONTENT_TYPE } from '@lr/proto'

/**
 * An answer whose JSON a service already serialised (Bus.requestJson): the gateway sends those
 * bytes as they are instead of parsing and serialising a page of records again. The bytes are
 * remembered beside the Response so compression can read them at once.
 */
const bodies = new WeakMap<Response, Uint8Array>()

/**
 * Bodies above this go out as a stream of pieces this size. Bun 1.4 sends a response that is
 * completed after the request's own turn of the event loop (over NATS, every one: the service's
 * answer arrives in a later turn) without its cork buffer, and a body over that 16 KiB buffer
 * then leaves in about 15 send() calls per 30 KB (strace); in pieces that fit it, each piece
 * leaves in one. Measured on a 20-line Bun.serve answering 30 KB a turn late, 64 connections:
 * 23k responses/s whole, 81k in 8 KiB pieces; answered in its own turn 96k whole, 83k in pieces
 * (upstream: oven-sh/bun#41341 corks every write). The stream is chunked: no Content-Length.
 */
const PIECE_BYTES = 8 * 1024

const inPieces = (body: Uint8Array) =>
  new ReadableStream({
    type: 'direct',
    pull(controller) {
      for (let at = 0; at < body.byteLength; at += PIECE_BYTES) {
        controller.write(body.subarray(at, at + PIECE_BYTES))
        controller.flush()
      }
      controller.close()
    },
  })

export function readyJson(body: Uint8Array): Response {
  const response = new Response(body.byteLength > PIECE_BYTES ? inPieces(body) : body, { headers: { 'content-type': JSON_CONTENT_TYPE } })
  bodies.set(response, body)
  return response
}

/** The JSON bytes of a readyJson answer; undefined for any other Response. */
export const readyJsonBytes = (response: Response): Uint8Array | undefined => bodies.get(response)
