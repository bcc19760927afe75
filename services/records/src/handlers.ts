import { serveLibrary } from '@lr/library-records'
import { type Bus, RECORDS_QUEUE, RECORDS_SUBJECTS } from '@lr/proto'
import type { RecordsService } from './service'

/** Serves every RECORDS_SUBJECTS subject in queue group `records`; returns one unsubscribe for all. */
export function serveRecords(bus: Bus, service: RecordsService): () => void {
  const subscriptions = serveLibrary(bus, RECORDS_SUBJECTS, RECORDS_QUEUE, service)
  return () => subscriptions.forEach((unsubscribe) => unsubscribe())
}
