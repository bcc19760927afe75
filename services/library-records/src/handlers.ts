import { type Bus, decode, type Principal } from '@lr/proto'
import { JsonText } from '@lr/platform/bus-handler'
import { BodyRequest, ExportRequest, IdRequest, ListRequest, UpdateRequest } from '@lr/proto'

/** The subjects of the shared lifecycle, as RECORDS_SUBJECTS and DYNAMIC_SUBJECTS name them. */
export interface LibrarySubjects {
  create: string
  batch: string
  list: string
  get: string
  update: string
  delete: string
  export: string
}

/** The operations of createLibraryService, whatever the kind. */
export interface LibraryOperations {
  create(principal: Principal, body: unknown, idempotencyKey?: string): Promise<unknown>
  batch(principal: Principal, body: unknown, idempotencyKey?: string): Promise<unknown>
  /** `list`'s reply as JSON text (kept and reused where the store allows: list-cache.ts); with `known`, for a gateway that keeps pages. */
  listJson(principal: Principal, query: Record<string, string | string[]>, known?: string | null): Promise<string>
  get(principal: Principal, id: string): Promise<unknown>
  update(principal: Principal, id: string, body: unknown, ifMatch?: string): Promise<unknown>
  delete(principal: Principal, id: string, ifMatch?: string): Promise<unknown>
  exportPage(principal: Principal, cursor: string | null): Promise<unknown>
}

/** Serves the lifecycle's subjects in `queue`; returns the unsubscribes, one per subject. */
export function serveLibrary(bus: Bus, subjects: LibrarySubjects, queue: string, service: LibraryOperations): (() => void)[] {
  const opts = { queue }
  return [
    bus.serve(subjects.create, async (p) => {
      const { principal, body, idempotency_key } = decode(BodyRequest, p)
      return service.create(principal, body, idempotency_key)
    }, opts),
    bus.serve(subjects.batch, async (p) => {
      const { principal, body, idempotency_key } = decode(BodyRequest, p)
      return service.batch(principal, body, idempotency_key)
    }, opts),
    bus.serve(subjects.list, async (p) => {
      const { principal, query, known } = decode(ListRequest, p)
      return new JsonText(await service.listJson(principal, query, known))
    }, opts),
    bus.serve(subjects.get, async (p) => {
      const { principal, id } = decode(IdRequest, p)
      return service.get(principal, id)
    }, opts),
    bus.serve(subjects.update, async (p) => {
      const { principal, id, body, if_match } = decode(UpdateRequest, p)
      return service.update(principal, id, body, if_match)
    }, opts),
    bus.serve(subjects.delete, async (p) => {
      const { principal, id, if_match } = decode(IdRequest, p)
      return service.delete(principal, id, if_match)
    }, opts),
    bus.serve(subjects.export, async (p) => {
      const { principal, cursor } = decode(ExportRequest, p)
      return service.exportPage(principal, cursor)
    }, opts),
  ]
}
