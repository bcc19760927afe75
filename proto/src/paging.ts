import { type Static, Type as T } from '@sinclair/typebox'
import type { Status } from './library'

export const LIMIT_DEFAULT = 100
export const LIMIT_MAX = 1000

/** Query string of the list routes, as the gateway forwards it (every value a string). */
export const ListQuery = T.Record(T.String(), T.String())
export type ListQuery = Static<typeof ListQuery>

/** A parsed list request. `after` is the store's position of the last record already seen. */
export interface ListOptions {
  limit: number
  after?: string
  updatedSince?: number
  status?: Status
}

export interface Page<T> {
  items: T[]
  /** Position of the last item when more may follow, else null. */
  next: string | null
}
