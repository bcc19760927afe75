import { createHmac, randomBytes } from 'node:crypto'

/** A new signing secret in the Standard Webhooks form: `whsec_` + base64 of 24 random bytes. */
export const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`

/**
 * The `webhook-signature` header of the Standard Webhooks spec: `v1,` + base64 of
 * HMAC-SHA256 under the secret's bytes (the base64 after `whsec_`) of `{id}.{timestamp}.{body}`.
 */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}
