import type { Bus, ExportChunk } from '@lr/proto'
import { bulkOutput } from '@lr/platform/bulk-gc'
import { errorFields, log } from '@lr/platform/log'
import { exportsCutShort } from '@lr/platform/metrics'
import { currentRequestId } from '@lr/platform/request-context'
import { bodyEndsLater } from '../plugins/observe'

/**
 * Streams a CSV export page by page from a service: memory stays flat whatever the row count.
 * The first page is fetched before answering, so a 403/404 is still a proper JSON error.
 * Chunks are enqueued as the strings they are: Bun writes a string chunk as UTF-8 itself, where
 * a TextEncoder copy per chunk was a buffer that lived until the next collection (a one-process
 * 1M-row export: 4 MiB lower peak and 4-7 % more rows/s without it).
 */
export async function csvResponse(bus: Bus, subject: string, payload: object, filename: string, request: Request): Promise<Response> {
  const first = await bus.request<ExportChunk>(subject, { ...payload, cursor: null })
  let cursor = first.next_cursor
  // The stream is pulled after the request's handler returned, outside its context.
  const requestId = currentRequestId()
  // The request's access line and metrics wait for the body's end (observe.ts).
  const ended = bodyEndsLater(request)
  let sentChars = first.csv.length
  const stream = new ReadableStream<string>({
    start(controller) {
      controller.enqueue(first.csv)
      if (!cursor) (controller.close(), ended())
    },
    async pull(controller) {
      let page: ExportChunk
      try {
        page = await bus.request<ExportChunk>(subject, { ...payload, cursor })
      } catch (error) {
        // The 200 is sent: all that is left is to end the body without its last chunk, so the
        // client's HTTP library reports a cut transfer (curl exits 18 or 56), never a whole CSV.
        // error() without a reason: with one, Bun prints its stack to stderr as no JSON line.
        exportsCutShort.inc({ subject })
        log().error({ request_id: requestId, subject, sent_chars: sentChars, ...errorFields(error) }, 'export cut short: a chunk failed after the 200 was sent')
        ended()
        return controller.error()
      }
      sentChars += page.csv.length
      controller.enqueue(page.csv)
      // The parsed reply is this process's garbage (platform/src/bulk-gc.ts).
      bulkOutput(page.csv.length)
      cursor = page.next_cursor
      if (!cursor) (controller.close(), ended())
    },
    // The client went away (or asked HEAD, whose body Bun drops).
    cancel: ended,
  })
  return new Response(stream, {
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${filename}"`,
    },
  })
}
