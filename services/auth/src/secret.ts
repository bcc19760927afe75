import { customAlphabet } from 'nanoid'
import type { KeyScope } from '@lr/proto'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
/** 32 base62 characters: 32 * log2(62) ≈ 190 random bits, above the 160 the contract asks. */
export const SECRET_LENGTH = 32
const randomSecret = customAlphabet(BASE62, SECRET_LENGTH)
const randomId = customAlphabet(BASE62, 20)

/** Fixed, recognisable prefixes so secret scanners find leaked keys and people tell the scopes apart. */
export const KEY_PREFIX: Record<KeyScope, string> = { personal: 'lrp_', business: 'lrb_' }
const KEY_SHAPE = new RegExp(`^(lrp_|lrb_)[0-9A-Za-z]{${SECRET_LENGTH}}$`)

export const newSecret = (scope: KeyScope) => KEY_PREFIX[scope] + randomSecret()

/**
 * What the store keeps instead of the secret: its SHA-256 in hex. A fast hash is enough: the secret
 * has ~190 random bits. Bun's one-shot hash, a third of node:crypto's createHash (every request).
 */
export const hashSecret = (secret: string): string => Bun.SHA256.hash(secret, 'hex')

/** true when the text has the shape of a key this service issues (checked before any store read). */
export const looksLikeKey = (text: string) => KEY_SHAPE.test(text)

export const newId = (prefix: 'acct' | 'team' | 'key') => `${prefix}_${randomId()}`
