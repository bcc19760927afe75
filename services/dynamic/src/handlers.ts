import { serveLibrary } from '@lr/library-records'
import { type Bus, CodesRequest, decode, DYNAMIC_QUEUE, DYNAMIC_SUBJECTS, IdRequest, ResolveRequest, ReviewRequest } from '@lr/proto'
import type { DynamicService } from './service'

/** Serves every DYNAMIC_SUBJECTS subject in queue group `dynamic`; returns one unsubscribe for all. */
export function serveDynamic(bus: Bus, service: DynamicService): () => void {
  const opts = { queue: DYNAMIC_QUEUE }
  const subscriptions = [
    ...serveLibrary(bus, DYNAMIC_SUBJECTS, DYNAMIC_QUEUE, service),
    bus.serve(DYNAMIC_SUBJECTS.resolve, async (p) => {
      const { code } = decode(ResolveRequest, p)
      return service.resolve(code)
    }, opts),
    bus.serve(DYNAMIC_SUBJECTS.codes, async (p) => {
      const { principal, cursor, limit } = decode(CodesRequest, p)
      return service.codes(principal, cursor, limit)
    }, opts),
    bus.serve(DYNAMIC_SUBJECTS.library, async (p) => {
      const { code } = decode(ResolveRequest, p)
      return service.libraryOf(code)
    }, opts),
    bus.serve(DYNAMIC_SUBJECTS.find, async (p) => {
      const { principal, id } = decode(IdRequest, p)
      return service.find(principal, id)
    }, opts),
    bus.serve(DYNAMIC_SUBJECTS.review, async (p) => {
      const { principal, id, body, if_match, idempotency_key } = decode(ReviewRequest, p)
      return service.review(principal, id, body, if_match, idempotency_key)
    }, opts),
  ]
  return () => subscriptions.forEach((unsubscribe) => unsubscribe())
}
