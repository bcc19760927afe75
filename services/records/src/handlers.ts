import { type Bus, decode } from '@lr/proto'
import { BodyRequest, ExportRequest, IdRequest, ListRequest, RECORDS_QUEUE, RECORDS_SUBJECTS, UpdateRequest } from '@lr/proto'
import type { RecordsService } from './service'

/** Serves every RECORDS_SUBJECTS subject in queue group `records`; returns one unsubscribe for all. */
export function serveRecords(bus: Bus, service: RecordsService): () => void {
  const opts = { queue: RECORDS_QUEUE }
  const subscriptions = [
    bus.serve(RECORDS_SUBJECTS.create, async (p) => {
      const { principal, body, idempotency_key } = decode(BodyRequest, p)
      return service.create(principal, body, idempotency_key)
    }, opts),
    bus.serve(RECORDS_SUBJECTS.batch, async (p) => {
      const { principal, body, idempotency_key } = decode(BodyRequest, p)
      return service.batch(principal, body, idempotency_key)
    }, opts),
    bus.serve(RECORDS_SUBJECTS.list, async (p) => {
      const { principal, query } = decode(ListRequest, p)
      return service.list(principal, query)
    }, opts),
    bus.serve(RECORDS_SUBJECTS.get, async (p) => {
      const { principal, id } = decode(IdRequest, p)
      return service.get(principal, id)
    }, opts),
    bus.serve(RECORDS_SUBJECTS.update, async (p) => {
      const { principal, id, body } = decode(UpdateRequest, p)
      return service.update(principal, id, body)
    }, opts),
    bus.serve(RECORDS_SUBJECTS.delete, async (p) => {
      const { principal, id } = decode(IdRequest, p)
      return service.delete(principal, id)
    }, opts),
    bus.serve(RECORDS_SUBJECTS.export, async (p) => {
      const { principal, cursor } = decode(ExportRequest, p)
      return service.exportPage(principal, cursor)
    }, opts),
  ]
  return () => subscriptions.forEach((unsubscribe) => unsubscribe())
}
