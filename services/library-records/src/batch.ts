import { AppError, type ItemError } from '@lr/proto'
import type { BatchEnvelope } from './batch-envelope'
import { FieldError, isPlainObject } from './fields'

/**
 * The items of a batch body `{ [key]: [...] }`, or also a bare array when the envelope allows.
 * Anything else (not an object, another field, missing/not an array, too few or too many items)
 * is one 400 AppError for the whole body (docs/decisions.md §4), never a per-item error.
 */
export function batchItems(body: unknown, envelope: BatchEnvelope): unknown[] {
  const { key, bareArray, minItems, maxItems } = envelope
  const shape = `an array of ${minItems} to ${maxItems} items`
  let items: unknown
  if (bareArray && Array.isArray(body)) items = body
  else if (isPlainObject(body)) {
    for (const field of Object.keys(body)) {
      if (field !== key) throw new AppError('bad_request', `unknown field "${field}"`)
    }
    if (body[key] === undefined) throw new AppError('bad_request', `${key} is required: ${shape}`)
    items = body[key]
  } else {
    const expected = bareArray ? `a JSON array of ${minItems} to ${maxItems} items, or an object with "${key}"` : `a JSON object with "${key}", ${shape}`
    throw new AppError('bad_request', `body must be ${expected}`)
  }
  if (!Array.isArray(items)) throw new AppError('bad_request', `${key} must be ${shape}`)
  if (items.length < minItems) throw new AppError('bad_request', `${key} must hold at least ${minItems === 1 ? 'one item' : `${minItems} items`}`)
  if (items.length > maxItems)
    throw new AppError('bad_request', `a batch holds at most ${maxItems} items; this one has ${items.length}`)
  return items
}

/**
 * Checks every item of a batch. When any item fails (FieldError), throws AppError.batch naming
 * every failing item by index (from 0), in order; otherwise returns the clean items in order.
 * Other errors propagate unchanged.
 */
export function checkBatch<T>(items: readonly unknown[], check: (item: unknown, index: number) => T): T[] {
  const clean: T[] = []
  const failures: ItemError[] = []
  items.forEach((item, index) => {
    // The item's own words: the body (an object, with the array) was fine.
    if (!isPlainObject(item)) return void failures.push({ index, error: 'item must be a JSON object' })
    try {
      clean.push(check(item, index))
    } catch (error) {
      if (!(error instanceof FieldError)) throw error
      failures.push({ index, error: error.message })
    }
  })
  if (failures.length > 0) throw AppError.batch(failures)
  return clean
}
