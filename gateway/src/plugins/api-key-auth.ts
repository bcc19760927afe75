import { Elysia } from 'elysia'
import { AppError, AUTH_SUBJECTS, type Bus, type Principal } from '@lr/proto'
import { pathStartOf } from '@lr/platform/request-url'
import { setPrincipal } from '../context'
import { mergeHeaders } from './set-headers'

/**
 * Admission of one verified request: throws AppError('rate_limited') to refuse, otherwise
 * returns the headers every authenticated response carries (X-RateLimit-*, RateLimit*).
 */
export type Admit = (principal: Principal) => Promise<Record<string, string>>

/**
 * Whether a request URL's path starts with /v1, read without parsing the URL (every request). A
 * URL with no path (-1) is read from its start, which is its scheme: not /v1.
 */
export const isApiPath = (url: string) => url.startsWith('/v1', pathStartOf(url))

/**
 * Every /v1 request: the key is verified by the auth service (403), then admitted by the rate
 * limiter (429), before routing and body parsing (docs/decisions.md §8 order). No cache: a revoked key
 * fails on the very next request. The caching headers of every /v1 answer are api-cache-headers.ts's.
 */
export const apiKeyAuth = (bus: Bus, admit?: Admit) =>
  new Elysia({ name: 'api-key-auth' }).onRequest(async ({ request, set }) => {
    if (!isApiPath(request.url)) return
    const key = request.headers.get('x-api-key')
    if (!key) throw new AppError('forbidden', 'missing API key: send it in the x-api-key header')
    // Several x-api-key headers arrive joined by commas, which no key holds: a proxy that adds the
    // key to a request that has it got "invalid API key" for a valid key.
    if (key.includes(',')) throw new AppError('forbidden', 'several x-api-key headers: send the key in one')
    const principal = await bus.request<Principal>(AUTH_SUBJECTS.verify, { key })
    setPrincipal(request, principal)
    if (admit) mergeHeaders(set.headers, await admit(principal))
  })
