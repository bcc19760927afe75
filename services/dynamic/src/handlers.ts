import { type Bus, decode } from '@lr/proto'
import { CodesRequest, DYNAMIC_QUEUE, DYNAMIC_SUBJECTS, ResolveRequest } from '@lr/proto'
import { BodyRequest, ExportRequest, IdRequest, ListRequest, UpdateRequest } from '@lr/proto'
import type { DynamicService } from './service'

/** Serves every DYNAMIC_SUBJECTS subject in queue group `dynamic`; returns one unsubscribe for all. */
export function serveDynamic(bus: Bus, service: DynamicService): () => void {
  const opts = { queue: DYNAMIC_QUEUE }
  const subscriptions = [
    bus.serve(DYNAMIC_SUBJECTS.create, async (p) => {
      const { principal, body, idempotency_key } = decode(BodyRequest, p)
      return service.create(principal, body, idempotency_key)
    }, opts),
    bus.serve(DYNAMIC_SUBJECTS.batch, async (p) => {
      const { principal, body, idempotency_key } = decode(BodyRequest, p)
      return service.batch(principal, body, idempotency_key)
    }, opts),
    bus.serve(DYNAMIC_SUBJECTS.list, async (p) => {
      const { principal, query } = decode(ListRequest, p)
      return service.list(principal, query)
    }, opts),
    bus.serve(DYNAMIC_SUBJECTS.get, async (p) => {
      const { principal, id } = decode(IdRequest, p)
      return service.get(principal, id)
    }, opts),
    bus.serve(DYNAMIC_SUBJECTS.update, async (p) => {
      const { principal, id, body } = decode(UpdateRequest, p)
      return service.update(principal, id, body)
    }, opts),
    bus.serve(DYNAMIC_SUBJECTS.delete, async (p) => {
      const { principal, id } = decode(IdRequest, p)
      return service.delete(principal, id)
    }, opts),
    bus.serve(DYNAMIC_SUBJECTS.export, async (p) => {
      const { principal, cursor } = decode(ExportRequest, p)
      return service.exportPage(principal, cursor)
    }, opts),
    bus.serve(DYNAMIC_SUBJECTS.resolve, async (p) => {
      const { code } = decode(ResolveRequest, p)
      return service.resolve(code)
    }, opts),
    bus.serve(DYNAMIC_SUBJECTS.codes, async (p) => {
      const { principal, cursor } = decode(CodesRequest, p)
      return service.codes(principal, cursor)
    }, opts),
    bus.serve(DYNAMIC_SUBJECTS.find, async (p) => {
      const { principal, id } = decode(IdRequest, p)
      return service.find(principal, id)
    }, opts),
  ]
  return () => subscriptions.forEach((unsubscribe) => unsubscribe())
}
