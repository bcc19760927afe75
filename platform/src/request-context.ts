import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * The request a piece of work belongs to. The gateway enters it when a request arrives; the bus
 * carries its id to the service (a NATS header, or the same field on the local bus) and the
 * handler runs inside it again, so every log line on the way names the same request_id.
 */
export interface RequestContext {
  requestId: string
}

const storage = new AsyncLocalStorage<RequestContext>()

/** The request id of the work running now, if it belongs to a request. */
export const currentRequestId = (): string | undefined => storage.getStore()?.requestId

/** Runs `work` as part of request `requestId` (absent: as part of none). */
export function withRequestId<T>(requestId: string | undefined, work: () => T): T {
  return requestId ? storage.run({ requestId }, work) : work()
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
