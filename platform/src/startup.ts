import type { JetStreamManager, NatsConnection } from 'nats'
import { hideCredentials } from '@lr/proto'

/**
 * Start-up failures as an operator should read them: one line saying what could not be had and
 * where, exit code 1 (a bad setting is 2, see loadConfigOrExit). A stack trace would bury the
 * cause; the causes at start-up are few and outside the code (a port, a server, a network).
 */

/** A start-up step that failed, worded for the operator. */
export class StartupError extends Error {}

/** A URL without its user and password, fit for a log line (NATS_URL, MONGODB_URL may carry them). */
export const withoutCredentials = (url: string): string => hideCredentials(url, '')

/** What failed, in the server's own words: a MongoDB error's name (its `code` is a bare number), else its code, else its first line. */
const codeOf = (error: unknown): string => {
  const { code, codeName } = (error ?? {}) as { code?: unknown; codeName?: unknown }
  return String(codeName ?? code ?? '') || (((error as Error)?.message ?? String(error)).split('\n')[0] ?? '')
}

/** Listens with `listen`; a port already taken becomes a StartupError naming the port and its setting. */
export function listening<T>(setting: string, port: number, listen: () => T): T {
  try {
    return listen()
  } catch (error) {
    if ((error as { code?: unknown })?.code === 'EADDRINUSE') throw new StartupError(`port ${port} (${setting}) is already in use`)
    throw error
  }
}

/**
 * Codes of a server that answered and refused, and what needs a look then instead of the network:
 * the URL's user and password, or its tls:// (nats.js's code when the server offers no TLS).
 */
const REFUSALS = new Map([
  ['AUTHORIZATION_VIOLATION', 'refused the credentials'],
  ['AuthenticationFailed', 'refused the credentials'],
  ['SERVER_OPT_NA', 'offers no TLS, which tls:// requires'],
])

/** Awaits a connection to a server; its failure becomes a StartupError naming the server and the URL. */
export async function reaching<T>(what: string, url: string, connect: () => Promise<T>): Promise<T> {
  try {
    return await connect()
  } catch (error) {
    // A URL the driver cannot parse is no outage: say what is wrong with it (its message names
    // no secret), not that the server is unreachable.
    if ((error as Error)?.name === 'MongoParseError') {
      throw new StartupError(`the URL of ${what} (${withoutCredentials(url)}) cannot be read: ${(error as Error).message} (percent-encode the user and password)`)
    }
    const code = codeOf(error)
    const how = REFUSALS.get(code) ?? 'is unreachable'
    throw new StartupError(`${what} at ${withoutCredentials(url)} ${how} (${code})`)
  }
}

/**
 * The JetStream of the NATS server at `url`, for a process that cannot work without it (the
 * resolver, analytics, webhooks). A server started without -js answers nothing on $JS.API, and
 * nats.js says only "503" (its JetStreamNotEnabled, also a server that refuses it to the
 * account): the line says what that means and what to change.
 */
export async function reachingJetStream(url: string, nc: NatsConnection): Promise<JetStreamManager> {
  try {
    return await nc.jetstreamManager()
  } catch (error) {
    // An authorization block that gives the product's user a reader's permissions: nats.js's
    // message is quoted ('Permissions Violation for Publish to "$JS.API.INFO"').
    if (codeOf(error) === 'PERMISSIONS_VIOLATION') {
      const refusal = String((error as Error).message).replace(/^'|'$/g, '')
      throw new StartupError(`NATS at ${withoutCredentials(url)} refuses this user JetStream's API (${refusal}): the product's user needs every subject, $JS.API.> included (deploy/README.md §2)`)
    }
    if (codeOf(error) !== '503') throw error
    throw new StartupError(`NATS at ${withoutCredentials(url)} has no JetStream (503): start nats-server with -js (or a jetstream block in its configuration)`)
  }
}

/**
 * Runs a process's start-up. When it fails: one line on stderr (`[name] cannot start: ...`) and
 * exit 1. An error that is not a StartupError is a bug or an unforeseen cause: its first line is
 * printed all the same, so the operator still gets one line.
 */
export async function startOrExit<T>(name: string, start: () => Promise<T>): Promise<T> {
  try {
    return await start()
  } catch (error) {
    const reason = error instanceof StartupError ? error.message : ((error as Error)?.message ?? String(error)).split('\n')[0]
    console.error(`[${name}] cannot start: ${reason}`)
    process.exit(1)
  }
}
