import { Elysia } from 'elysia'
import type { Bus } from '@lr/proto'
import { type Admit, apiKeyAuth } from './plugins/api-key-auth'
import { apiCacheHeaders } from './plugins/api-cache-headers'
import { errorHandler } from './plugins/error-handler'
import { compression } from './plugins/compression'
import { cors } from './plugins/cors'
import { methodNotAllowed } from './plugins/method-not-allowed'
import { jsonBody } from './plugins/json-body'
import { requestId } from './plugins/request-id'
import { observe } from './plugins/observe'
import { docsRoutes } from './routes/docs'
import { healthRoutes, type ReadinessChecks } from './routes/health'
import { staticRoutes } from './routes/static'
import { dynamicRoutes } from './routes/dynamic'
import { analyticsRoutes } from './routes/analytics'
import { webhookRoutes } from './routes/webhooks'
import { hostRequired } from './plugins/host-required'

export interface GatewayDeps {
  bus: Bus
  /** Rate limiting and quotas; absent means unlimited (tests of other concerns). */
  admit?: Admit
  /** Dependencies /readyz probes, by name: any failing one makes it 503. */
  readiness?: ReadinessChecks
  /** Dependencies the gateway serves without (Redis): /readyz lists those failing under `degraded`. */
  optional?: ReadinessChecks
  /** The CORS_ORIGINS setting as configured: `*`, a comma-separated list of origins; empty or absent: CORS off. */
  corsOrigins?: string
}

/** The API gateway as an Elysia app; no I/O happens until it handles a request. */
export function createGateway(deps: GatewayDeps) {
  // Elysia reads the path from request.url's 11th character on by default ("http://" and a
  // host of at least 4): behind a Host of 1-3 characters (`x`, `api`) it routed `/ab/v1/qrcodes`
  // as `/v1/qrcodes` while the key check, reading the real path, skipped it. From the 7th: the
  // gateway's request.url is always http:// (Bun serves it without TLS; in-process, http://localhost).
  // No body is too large for Bun.serve itself: past its default maxRequestBodySize (128 MiB) it
  // answered a bare 413 (no JSON, request id or cache headers) before the gateway ran. The
  // gateway refuses every body over 1 MiB with its JSON 413 (json-body.ts) from the declared
  // length, or after 1 MiB of a chunked one, and never reads more.
  return new Elysia({ handler: { standardHostname: false }, serve: { maxRequestBodySize: Number.MAX_SAFE_INTEGER } })
    .use(requestId)
    .use(hostRequired)
    .use(observe)
    // Before the error handler: it turns the router's 404 into 405 on a known path.
    .use(methodNotAllowed)
    .use(errorHandler)
    // Before CORS, whose preflight answer is a /v1 answer too.
    .use(apiCacheHeaders)
    // Before the key check: a preflight carries no key.
    .use(cors(deps.corsOrigins))
    .use(compression)
    .use(docsRoutes())
    .use(healthRoutes(deps.readiness ?? { bus: () => deps.bus.ping() }, deps.optional))
    .use(apiKeyAuth(deps.bus, deps.admit))
    .use(jsonBody)
    .use(staticRoutes(deps.bus))
    // Before the dynamic routes: /v1/dynqrcodes/analytics is a route, not a code.
    .use(analyticsRoutes(deps.bus))
    .use(dynamicRoutes(deps.bus))
    .use(webhookRoutes(deps.bus))
}

export type Gateway = ReturnType<typeof createGateway>
