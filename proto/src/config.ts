import { type Static, Type as T } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

/** The log levels of LOG_LEVEL, most severe first (pino's names). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

const port = (value: number) => T.Integer({ minimum: 0, maximum: 65535, default: value })
const count = (value: number) => T.Integer({ minimum: 1, default: value })

/**
 * VISITOR_HASH_KEY when unset: public (it is in this repository), so a visitor id made with it
 * can be reversed by trying every IPv4 address with the scan's user agent. A process that makes
 * visitor ids says so at start (the resolver's serveShortLinks).
 */
export const DEV_VISITOR_HASH_KEY = 'dev-only-visitor-hash-key-change-me'

/** Every setting of docs/decisions.md §1, with its default. Read once, in a process's main.ts. */
export const ConfigSchema = T.Object({
  PORT: port(3000),
  SHORT_PORT: port(3001),
  /**
   * Threads that answer short links on SHORT_PORT in one process (`bun start`), sharing the port
   * (SO_REUSEPORT); unset: one per usable CPU, none with one (defaultResolverThreads in
   * services/dynamic/src/resolver/serve.ts); 0: the main thread answers them, beside the API.
   */
  RESOLVER_THREADS: T.Optional(T.Integer({ minimum: 0, maximum: 64 })),
  /**
   * Probe listener (/healthz, /readyz, /metrics) of a process without its own HTTP API; 0: none.
   * Set, the resolver's SHORT_PORT no longer answers /metrics (`bun start` has them on PORT).
   */
  HEALTH_PORT: port(0),
  /**
   * Prefix of every short_url; unset: `http://localhost:<SHORT_PORT>` (loadConfig), where `bun
   * start` answers them. A trailing `/` is dropped; a query, a fragment or a user name is refused
   * (checkedShortBaseUrl): a code after them would never reach the resolver's path.
   */
  SHORT_BASE_URL: T.String({ pattern: '^https?://\\S+$', 'x-error': 'must be an http or https URL, such as https://qr.example.com' }),
  DATA_DIR: T.String({ minLength: 1, default: './data' }),
  TRANSPORT: T.Union([T.Literal('memory'), T.Literal('nats')], { default: 'memory' }),
  /** One server or several, comma-separated: nats://, tls:// (TLS required) or `host:port` alone, meaning nats:// (checkNatsUrl). */
  NATS_URL: T.String({ minLength: 1, default: 'nats://127.0.0.1:4222' }),
  STORE: T.Union([T.Literal('sqlite'), T.Literal('mongo')], { default: 'sqlite' }),
  MONGODB_URL: T.Optional(T.String({ pattern: '^mongodb(\\+srv)?://\\S+$', 'x-error': 'must be a mongodb:// or mongodb+srv:// URL' })),
  LIMITER: T.Union([T.Literal('memory'), T.Literal('redis')], { default: 'memory' }),
  REDIS_URL: T.String({ pattern: '^rediss?://\\S+$', default: 'redis://127.0.0.1:6379', 'x-error': 'must be a redis:// or rediss:// URL' }),
  KEY_ACTIVATION_DELAY_S: T.Integer({ minimum: 0, default: 0 }),
  LIMIT_PERSONAL_DAILY: count(2000),
  LIMIT_PERSONAL_PER_SECOND: count(5),
  LIMIT_PERSONAL_BURST: count(10),
  LIMIT_BUSINESS_DAILY: count(10000),
  LIMIT_BUSINESS_PER_SECOND: count(10),
  LIMIT_BUSINESS_BURST: count(20),
  TRUST_PROXY: T.Integer({ minimum: 0, maximum: 16, default: 0 }),
  /**
   * Browser origins the API answers CORS for: `*`, or exact origins (`https://app.example`,
   * scheme://host[:port], no path) separated by commas; empty: no CORS header at all.
   */
  CORS_ORIGINS: T.String({ pattern: '^(\\*|https?://[^/\\s,*]+(\\s*,\\s*https?://[^/\\s,*]+)*)?$', default: '', 'x-error': 'must be *, or origins (scheme://host[:port], no path) separated by commas' }),
  /** Secret for the pseudonymous visitor id of a scan (keyed hash); unset, the public DEV_VISITOR_HASH_KEY. */
  VISITOR_HASH_KEY: T.String({ minLength: 16, default: DEV_VISITOR_HASH_KEY }),
  /**
   * Key of the list cursors (HMAC-SHA256, platform/src/cursor.ts). Unset: a random key per
   * process with TRANSPORT=memory; with TRANSPORT=nats every replica must share one, so unset
   * there falls back to a development value and the process logs a warning.
   */
  CURSOR_SECRET: T.Optional(T.String({ minLength: 16 })),
  /** Where the resolver keeps scans the broker cannot take yet; default `${DATA_DIR}/scan-spool`. */
  SCAN_SPOOL_DIR: T.Optional(T.String({ minLength: 1 })),
  /** Bound of that spool on disk, in MiB; beyond it scans are dropped (and counted). */
  SCAN_SPOOL_MAX_MB: T.Integer({ minimum: 1, default: 1024 }),
  /**
   * TRANSPORT=nats, analytics processes: 1 copies every scan to the public SCANS stream (one
   * message per scan on scans.<code>, for outside consumers); 0 leaves SCANS alone, for
   * deployments nothing outside reads scans from (saves one stored message per scan).
   */
  SCAN_RELAY: T.Integer({ minimum: 0, maximum: 1, default: 1 }),
  /**
   * TRANSPORT=nats, analytics processes: how far below the process's CPU priority the relay's
   * thread runs (nice, added to the process's, 19 at most). On a machine the relay shares with
   * the resolver or ingestion, redirects and the aggregates take the CPU first during a burst and
   * SCANS trails until it is over; 0 keeps the relay at the process's priority.
   */
  SCAN_RELAY_NICE: T.Integer({ minimum: 0, maximum: 19, default: 10 }),
  /**
   * The largest bus message (request or reply), enforced the same by both buses; over NATS the
   * server's own max_payload lowers it further. Default 8 MiB, what deploy/infra gives NATS.
   */
  BUS_MAX_PAYLOAD_BYTES: T.Integer({ minimum: 256 * 1024, default: 8 * 1024 * 1024 }),
  /** 1: webhook destinations may be private, loopback, link-local or unique-local addresses (tests, closed networks). */
  WEBHOOKS_ALLOW_PRIVATE: T.Integer({ minimum: 0, maximum: 1, default: 0 }),
  /** First retry delay of a failed webhook delivery; doubled per attempt (with jitter) up to WEBHOOK_RETRY_MAX_MS. */
  WEBHOOK_RETRY_BASE_MS: T.Integer({ minimum: 1, default: 5000 }),
  /** Longest delay between two attempts of one webhook delivery. */
  WEBHOOK_RETRY_MAX_MS: T.Integer({ minimum: 1, default: 3_600_000 }),
  /** How long a webhook delivery is retried; an endpoint failing every delivery this long is disabled. */
  WEBHOOK_RETRY_WINDOW_S: T.Integer({ minimum: 1, default: 86_400 }),
  /** Time one webhook attempt may take (connect to last byte of the answer's head). */
  WEBHOOK_TIMEOUT_MS: T.Integer({ minimum: 100, default: 10_000 }),
  /** Lowest level written to stdout as JSON lines; `silent` writes nothing. */
  LOG_LEVEL: T.Union(LOG_LEVELS.map((level) => T.Literal(level)), { default: 'info' }),
})

export type Config = Static<typeof ConfigSchema>

/** Thrown when a setting is invalid; the message names the setting. */
export class ConfigError extends Error {}

const INTEGER_SETTINGS = new Set(
  Object.entries(ConfigSchema.properties)
    .filter(([, schema]) => (schema as { type?: string }).type === 'integer')
    .map(([name]) => name),
)

/** Validates the environment against ConfigSchema; unset settings take their defaults. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const raw: Record<string, unknown> = {}
  for (const name of Object.keys(ConfigSchema.properties)) {
    const value = env[name]
    if (value === undefined || value === '') continue
    raw[name] = INTEGER_SETTINGS.has(name) && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value
  }
  const config = Value.Default(ConfigSchema, raw) as Record<string, unknown>
  // A short link's default host is where this machine answers it: a SHORT_PORT of its own moves it
  // too (0, a free port, is known only once listening: 3001 stands in).
  config.SHORT_BASE_URL ??= `http://localhost:${(config.SHORT_PORT as number) || 3001}`
  const firstError = Value.Errors(ConfigSchema, config).First()
  if (firstError) {
    const name = firstError.path.split('/')[1] ?? '(config)'
    throw invalid(name, env[name], messageOf(firstError.schema as Parameters<typeof messageOf>[0], firstError.message))
  }
  if (config.STORE === 'mongo' && !config.MONGODB_URL) throw new ConfigError('STORE=mongo needs MONGODB_URL')
  config.SHORT_BASE_URL = checkedShortBaseUrl(config.SHORT_BASE_URL as string, env.SHORT_BASE_URL)
  checkNatsUrl(config.NATS_URL as string, env.NATS_URL)
  // MONGODB_URL is left to the driver: a replica set's hosts (`mongodb://a:1,b:2/db`) are no URL to URL.
  if (!URL.canParse(config.REDIS_URL as string)) throw invalid('REDIS_URL', env.REDIS_URL, 'is not a URL')
  return config as Config
}

/** Settings whose value is a secret: an error names them, never repeats them. */
const SECRET_SETTINGS = new Set(['CURSOR_SECRET', 'VISITOR_HASH_KEY'])

/** The error of one setting; a secret, and a URL's user and password, are not repeated. */
const invalid = (name: string, value: string | undefined, message: string) => {
  const shown = SECRET_SETTINGS.has(name) ? '(hidden)' : JSON.stringify(hideCredentials(value ?? ''))
  return new ConfigError(`invalid setting ${name}=${shown}: ${message}`)
}

/**
 * `value` without the user and password of the URLs in it, for an error or a log line. A bad
 * value may hold `@`, `/` or `,` in its password, or no scheme (`user:pw@host:4222`), so each URL
 * (a list starts a new one at `,scheme://`) loses everything from its authority to its last `@`,
 * and with it, when in doubt, a host or path before that `@`.
 */
export const hideCredentials = (value: string, hidden = '***@'): string =>
  value
    .split(/,(?=\s*[a-z][a-z0-9+.-]*:\/\/)/i)
    .map((url) => (url.includes('@') ? `${/^\s*[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0] ?? ''}${hidden}${url.slice(url.lastIndexOf('@') + 1)}` : url))
    .join(',')

/** A setting's rule in words: its `x-error`, the choices of a union of literals, else TypeBox's message. */
function messageOf(schema: { anyOf?: { const?: unknown }[]; 'x-error'?: unknown }, fallback: string): string {
  if (typeof schema['x-error'] === 'string') return schema['x-error']
  const choices = schema.anyOf?.map((option) => option.const)
  if (choices?.length && choices.every((choice) => typeof choice === 'string')) return `must be one of ${choices.join(', ')}`
  return fallback
}

/** SHORT_BASE_URL as every short_url starts: a URL with a host and maybe a path, without its trailing `/`. */
function checkedShortBaseUrl(value: string, sent: string | undefined): string {
  const url = URL.parse(value)
  if (!url || !url.hostname) throw invalid('SHORT_BASE_URL', sent, 'is not a URL')
  if (url.search || url.hash || value.includes('#') || value.includes('?'))
    throw invalid('SHORT_BASE_URL', sent, 'must have no query or fragment: a code after them would not be part of the path a browser asks for')
  if (url.username || url.password) throw invalid('SHORT_BASE_URL', sent, 'must have no user name or password')
  return value.replace(/\/+$/, '')
}

/**
 * NATS_URL: each comma-separated server nats://, tls:// (then TLS is required, natsServerOptions)
 * or `host:port` alone (nats://), with a host. Another scheme is refused: nats.js would take
 * `http://` as nats:// all the same.
 */
function checkNatsUrl(value: string, sent: string | undefined): void {
  for (const server of value.split(',').map((part) => part.trim())) {
    const url = URL.parse(/^[a-z][a-z0-9+.-]*:\/\//i.test(server) ? server : `nats://${server}`)
    if (!url || !url.hostname || /\s/.test(server) || !['nats:', 'tls:'].includes(url.protocol))
      throw invalid('NATS_URL', sent, `${JSON.stringify(hideCredentials(server))} is not a NATS server (nats://host:port, tls://host:port or host:port, several separated by commas)`)
  }
}
