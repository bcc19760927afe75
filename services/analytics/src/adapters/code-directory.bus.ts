import { AppError, type Bus } from '@lr/proto'
import { type CodesPage, type CodeStatus, DYNAMIC_SUBJECTS } from '@lr/proto'
import type { CodeDirectory } from '../ports'

/** The CodeDirectory of the dynamic service, asked over the bus (dynamic.v1.codes / dynamic.v1.find). */
export function createBusCodeDirectory(bus: Bus): CodeDirectory {
  return {
    liveCodes: (principal, { cursor, limit }) => bus.request<CodesPage>(DYNAMIC_SUBJECTS.codes, { principal, cursor, limit }),
    async find(principal, code) {
      try {
        return await bus.request<CodeStatus>(DYNAMIC_SUBJECTS.find, { principal, id: code })
      } catch (error) {
        if (error instanceof AppError && error.code === 'not_found') return null
        throw error
      }
    },
  }
}
