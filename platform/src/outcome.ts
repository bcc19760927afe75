import { AppError, StoreConflict } from '@lr/proto'

/**
 * The `outcome` label of a failed call in the bus and store histograms
 * (lr_bus_request_duration_seconds, lr_bus_handler_duration_seconds,
 * lr_store_operation_duration_seconds). `refused`: the call was answered, and the answer is the
 * client's to act on: an AppError whose status in the one table is 4xx (a duplicate email, a
 * second live key, a 404, an invalid body), or a unique key the store refused a write on
 * (StoreConflict: its service answers that with a 4xx, or draws a new id). `error`: anything
 * else, the product's own failure (a 500, a store or service it could not reach). Both had been
 * `error`, so an alert on its rate paged for clients' mistakes.
 */
export function failedOutcome(error: unknown): 'refused' | 'error' {
  if (error instanceof StoreConflict) return 'refused'
  return error instanceof AppError && error.status < 500 ? 'refused' : 'error'
}
