import { checkFields, checkName, checkStatus, checkStyle, checkUrl } from '@lr/library-records'
import type { StaticRecord } from '@lr/proto'
import type { StaticPatch } from './ports'

/** The fields a client may send on create (api-contract.md §3); anything else is rejected by name. */
export interface CreateFields {
  url: string
  name: string
  style?: Record<string, unknown>
}

const CREATE_CHECKS = { url: (v: unknown) => checkUrl('url', v), name: checkName, style: checkStyle }
const PATCH_CHECKS = { ...CREATE_CHECKS, status: checkStatus }

/** Validates one create body or batch item; throws FieldError. */
export const checkCreate = (body: unknown) => checkFields<CreateFields>(body, CREATE_CHECKS, ['url', 'name'])

/** Validates a PATCH body: at least one of url, name, status, style; throws FieldError. */
export const checkPatch = (body: unknown) => checkFields<StaticPatch>(body, PATCH_CHECKS, [], { atLeastOne: true })

/** CSV columns of /qrcodes/export, in order (api-contract.md §7). */
export const EXPORT_COLUMNS = [
  'qr_id', 'name', 'url', 'status', 'team_id', 'created_by', 'style', 'created_at', 'updated_at',
] as const satisfies readonly (keyof StaticRecord)[]
