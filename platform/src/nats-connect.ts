import type { ConnectionOptions, NatsConnection } from 'nats'

/**
 * The options of every NATS connection of the product. It reconnects for ever, a quarter second
 * apart: a broker that restarts is found again, and what waits meanwhile is the caller's
 * (bus-nats.ts answers requests with a 503 while disconnected).
 *
 * `noAsyncTraces`: nats.js otherwise makes an Error per request and per JetStream publish, to add
 * the caller's stack to a failure. JavaScriptCore captures a stack for each, and that was 7 % of
 * the NATS gateway's CPU under the create load, more than any code of ours (bench/ANALYSIS.md,
 * seventeenth session). Without it a request's timeout or "no responders" names the subject, not
 * the line that asked; bus-nats.ts and the logs already name the subject.
 */
export const natsConnectOptions = (url: string, name: string): ConnectionOptions => ({
  ...natsServerOptions(url),
  name,
  maxReconnectAttempts: -1,
  reconnectTimeWait: 250,
  // A broker that hangs (stopped, or cut off without a reset) keeps the socket open: only pings
  // tell. nats.js's defaults (every 2 minutes, two missed) noticed it after about 4 minutes, and
  // every request meanwhile waited out its 10 s for a 504. Every 2 s, two missed: within about
  // 6 s the connection counts as lost, and requests are a 503 at once (bus-nats.ts).
  pingInterval: 2_000,
  maxPingOut: 2,
  // A port that accepts and never speaks NATS (another kind of server there, a broker hung) held
  // a start, or the admin command line, for nats.js's 20 s; 5 s, as MongoDB's server selection.
  timeout: 5_000,
  noAsyncTraces: true,
})

/**
 * NATS_URL as the client takes it. nats.js ignores credentials written in a server URL, and the
 * server then refuses the connection (deploy/README.md tells operators to write them there), so
 * they are read here and handed over as options: `nats://user:password@host:4222` gives a user
 * and password, `nats://token@host:4222` a token, percent-escapes decoded. Several servers may be
 * given, comma-separated; credentials are the last ones written. A `tls://` server makes the
 * connection require TLS (`tls: {}`, every server then): nats.js reads tls:// as nats:// and
 * would talk plain text to a server that offers no TLS.
 */
export function natsServerOptions(url: string): Pick<ConnectionOptions, 'servers' | 'user' | 'pass' | 'token' | 'tls'> {
  const servers: string[] = []
  let credentials: Pick<ConnectionOptions, 'user' | 'pass' | 'token'> = {}
  for (const server of url.split(',').map((part) => part.trim()).filter(Boolean)) {
    const written = /^([a-z][a-z0-9+.-]*:\/\/)?([^@/]*)@(.*)$/i.exec(server)
    if (!written) {
      servers.push(server)
      continue
    }
    const [, scheme = '', auth = '', rest = ''] = written
    servers.push(`${scheme}${rest}`)
    const colon = auth.indexOf(':')
    credentials = colon < 0 ? { token: decodeURIComponent(auth) } : { user: decodeURIComponent(auth.slice(0, colon)), pass: decodeURIComponent(auth.slice(colon + 1)) }
  }
  return { servers, ...credentials, ...(servers.some((server) => /^tls:\/\//i.test(server)) ? { tls: {} } : {}) }
}

/**
 * What a process does when a NATS connection of its own closes for good: `fail` (the process's
 * Shutdown.fail: one line, the usual stop, exit 1). Reconnecting never ends by itself
 * (natsConnectOptions), but the client gives up when the server refuses its credentials twice in
 * a row (rotated or revoked). The process could then do nothing more, and its /healthz would stay
 * 200 for ever; its supervisor starts it again instead, and a start that cannot connect says why
 * in one line. A close of the process's own (its stop) resolves here too: `fail` ignores it then.
 */
export function failWhenClosed(nc: NatsConnection, fail: (fields: Record<string, unknown>, message: string) => void): void {
  void nc.closed().then((error) => {
    const reason = closeReason(error)
    fail({ connection: 'NATS', error: reason }, `the NATS connection closed for good (${reason}): stopping`)
  })
}

/** Why a connection closed, as nc.closed() tells it (the server's words come quoted: 'Authorization Violation'). */
export const closeReason = (error: Error | void): string => error?.message.replace(/^'(.*)'$/, '$1') ?? 'closed'
