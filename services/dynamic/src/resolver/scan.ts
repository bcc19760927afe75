import { createHmac } from 'node:crypto'
import type { ScanEvent } from '@lr/proto/scans'

/** What a scan event needs to know about how the resolver is deployed. */
export interface ScanSettings {
  /** TRUST_PROXY=1: the address comes from X-Forwarded-For and the country from CF-IPCountry. */
  trustProxy: boolean
  /** VISITOR_HASH_KEY: the key of the visitor id, so it cannot be reversed by guessing addresses. */
  visitorHashKey: string
}

/** The client address: the first X-Forwarded-For entry behind a trusted proxy, else the socket's. */
function addressOf(request: Request, socketAddress: string, settings: ScanSettings): string {
  if (!settings.trustProxy) return socketAddress
  return request.headers.get('x-forwarded-for')?.split(',')[0]?.trim() || socketAddress
}

/** CF-IPCountry behind a trusted proxy, when it is a country (XX: unknown, T1: Tor); else `unknown`. */
function countryOf(request: Request, settings: ScanSettings): string {
  const country = settings.trustProxy ? request.headers.get('cf-ipcountry')?.toUpperCase() : undefined
  return country && /^[A-Z]{2}$/.test(country) && country !== 'XX' && country !== 'T1' ? country : 'unknown'
}

/** The event of one counted scan (proto ScanEvent); the address only enters the keyed hash. */
export function scanEventOf(request: Request, code: string, socketAddress: string, at: number, settings: ScanSettings): ScanEvent {
  const userAgent = request.headers.get('user-agent') ?? ''
  const visitor = createHmac('sha256', settings.visitorHashKey).update(`${addressOf(request, socketAddress, settings)}\n${userAgent}`)
  const referer = request.headers.get('referer')
  return {
    scan_id: crypto.randomUUID(),
    code,
    scanned_at: at,
    user_agent: userAgent,
    visitor_id: visitor.digest('hex'),
    country: countryOf(request, settings),
    ...(referer ? { referer } : {}),
  }
}
