import { checkFields, checkName, checkStatus, checkStyle, checkUrl } from '@lr/library-records'
import type { DynamicRecord } from '@lr/proto'
import type { DynamicPatch } from './ports'

/** The fields a client may send on create (api-contract.md §3); anything else is rejected by name. */
export interface CreateFields {
  destination_url: string
  name: string
  style?: Record<string, unknown>
}

const CREATE_CHECKS = { destination_url: (v: unknown) => checkUrl('destination_url', v), name: checkName, style: checkStyle }
const PATCH_CHECKS = { ...CREATE_CHECKS, status: checkStatus }

/** Validates one create body or batch item; throws FieldError. */
export const checkCreate = (body: unknown) => checkFields<CreateFields>(body, CREATE_CHECKS, ['destination_url', 'name'])

/** Validates a PATCH body: at least one of destination_url, name, status, style; throws FieldError. */
export const checkPatch = (body: unknown) => checkFields<DynamicPatch>(body, PATCH_CHECKS, [], { atLeastOne: true })

/** CSV columns of /dynqrcodes/export, in order (api-contract.md §7). */
export const EXPORT_COLUMNS = [
  'code', 'short_url', 'destination_url', 'name', 'status', 'team_id', 'created_by', 'style', 'created_at', 'updated_at',
] as const satisfies readonly (keyof DynamicRecord)[]
