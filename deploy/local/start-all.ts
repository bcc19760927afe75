import { ENTRY_POINTS, type ProcessName, spawnProcesses } from './processes'

/**
 * `bun run start:nats`: every process of TRANSPORT=nats mode on this machine, sharing this
 * shell's environment (NATS_URL, STORE, LIMITER...). A nats-server must already listen at NATS_URL;
 * with STORE=mongo every process opens MONGODB_URL, with LIMITER=redis the gateway REDIS_URL
 * (README "The scale-out stack on one machine"; test/api-scale-out.test.ts runs it, two of each, on FerretDB).
 *
 * HEALTH_PORT, when set, is the first of six probe ports, one per process without an API, in
 * ENTRY_POINTS order: auth on HEALTH_PORT, records +1, dynamic +2, analytics +3, webhooks +4,
 * resolver +5 (the gateway's probes are on PORT). One port for all would let only one of them start.
 *
 * A process that ends while start:nats runs (a port taken, NATS gone for good, a crash) stops the
 * others: one line naming it and its exit code, exit 1. Otherwise half of the product would run on
 * without a word (test/start-all.test.ts).
 */
const names = Object.keys(ENTRY_POINTS) as ProcessName[]
const probed: ProcessName[] = names.filter((name) => name !== 'gateway')
const firstHealthPort = Number(Bun.env.HEALTH_PORT)
// A HEALTH_PORT that is no port goes to every process as it is: each says so (exit 2), and start:nats stops.
const envOf = (name: ProcessName): Record<string, string> =>
  Number.isInteger(firstHealthPort) && firstHealthPort > 0 && probed.includes(name) ? { HEALTH_PORT: String(firstHealthPort + probed.indexOf(name)) } : {}

const group = spawnProcesses(Bun.env, names, { inherit: true, envOf })
let stopping = false
const stop = (exitCode: number) => {
  if (stopping) return
  stopping = true
  void group.stop().then(() => process.exit(exitCode))
}
for (const name of names)
  void group.exited(name)?.then((code) => {
    if (stopping) return
    console.error(`[start:nats] ${name} exited with code ${code}: stopping the other processes`)
    stop(1)
  })
process.on('SIGINT', () => stop(0))
process.on('SIGTERM', () => stop(0))
