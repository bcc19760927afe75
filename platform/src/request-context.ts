import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * The request a piece of work belongs to. The gateway enters it when a request arrives; the bus
 * carries its id to the service (a NATS header, or the same field on the local bus) and the
 * handler runs inside it again, so every log line on the way names the same request_id.
 */
export interface RequestContext {
  requestId?: string
  /**
   * In a bus handler: when the caller of the request it handles stops waiting, in epoch ms by
   * the caller's clock (bus-deadline.ts). A request the handler makes waits no longer than that.
   */
  deadline?: number
}

const storage = new AsyncLocalStorage<RequestContext>()

/** The request id of the work running now, if it belongs to a request. */
export const currentRequestId = (): string | undefined => storage.getStore()?.requestId

/** The deadline of the bus request being handled now, if any (RequestContext.deadline). */
export const currentDeadline = (): number | undefined => storage.getStore()?.deadline

/** Runs `work` as part of request `requestId` (absent: as part of none). */
export function withRequestId<T>(requestId: string | undefined, work: () => T): T {
  return requestId ? storage.run({ requestId }, work) : work()
}

/**
 * Runs `work` as the handler of a bus request: part of request `requestId`, with its caller's
 * `deadline`. Either may be absent (a peer from before deadlines, work of no API request).
 */
export function asHandlerOf<T>(requestId: string | undefined, deadline: number | undefined, work: () => T): T {
  return requestId || deadline ? storage.run({ requestId, deadline }, work) : work()
}

/**
 * Runs `work` as part of the current request but without its deadline: for work that must be
 * done whether or not the caller still waits (the record events of a write already stored).
 */
export function beyondDeadline<T>(work: () => T): T {
  const context = storage.getStore()
  if (context?.deadline === undefined) return work()
  return context.requestId ? storage.run({ requestId: context.requestId }, work) : storage.exit(work)
}

/**
 * Runs `work` as part of no request, whatever the caller belongs to: for work done once for
 * several requests (the events of their writes, sent as one batch), which no one of them owns.
 */
export function outsideRequest<T>(work: () => T): T {
  return storage.exit(work)
}

/**
 * Marks the rest of the current asynchronous execution as request `requestId`. For hooks that
 * cannot wrap what follows them (Elysia's onRequest), at the very start of a request.
 */
export function enterRequest(requestId: string): void {
  storage.enterWith({ requestId })
}
