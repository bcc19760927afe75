import type { Bus, ExportChunk } from '@lr/proto'
import { bulkOutput } from '@lr/platform/bulk-gc'

const encoder = new TextEncoder()

/**
 * Streams a CSV export page by page from a service: memory stays flat whatever the row count.
 * The first page is fetched before answering, so a 403/404 is still a proper JSON error.
 */
export async function csvResponse(bus: Bus, subject: string, payload: object, filename: string): Promise<Response> {
  const first = await bus.request<ExportChunk>(subject, { ...payload, cursor: null })
  let cursor = first.next_cursor
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(first.csv))
      if (!cursor) controller.close()
    },
    async pull(controller) {
      const page = await bus.request<ExportChunk>(subject, { ...payload, cursor })
      controller.enqueue(encoder.encode(page.csv))
      // The parsed reply and its bytes are this process's garbage (platform/src/bulk-gc.ts).
      bulkOutput(page.csv.length)
      cursor = page.next_cursor
      if (!cursor) controller.close()
    },
  })
  return new Response(stream, {
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${filename}"`,
    },
  })
}
