import { type ConnectionOptions } from 'nats'

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
export const natsConnectOptions = (servers: string, name: string): ConnectionOptions => ({
  servers,
  name,
  maxReconnectAttempts: -1,
  reconnectTimeWait: 250,
  noAsyncTraces: true,
})
