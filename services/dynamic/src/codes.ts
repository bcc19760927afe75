import { customAlphabet } from 'nanoid'
import { AppError, isIssuableCode } from '@lr/proto'

/** Length of a new code: 62^8 ≈ 2.2e14 codes, so a collision (retried anyway) stays rare for ever. */
export const CODE_LENGTH = 8

/** The default generator: CODE_LENGTH random characters of [0-9A-Za-z]. */
export const randomCode = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', CODE_LENGTH)

/** Draws before a generator is declared broken; a sound one needs about one draw per code. */
const MAX_DRAWS_PER_CODE = 100

/**
 * `count` distinct issuable codes from `generate`: drawings that are malformed, route words
 * (docs/decisions.md §3) or repeated within the call are drawn again.
 */
export function drawCodes(generate: () => string, count: number): string[] {
  const codes = new Set<string>()
  for (let draws = 0; codes.size < count; draws++) {
    if (draws >= count * MAX_DRAWS_PER_CODE) throw new AppError('internal', 'could not draw a new code')
    const code = generate()
    if (isIssuableCode(code)) codes.add(code)
  }
  return [...codes]
}
