import { spawnProcesses } from './processes'

/**
 * `bun run start:nats`: every process of TRANSPORT=nats mode on this machine, sharing this
 * shell's environment (NATS_URL, STORE, LIMITER...). A nats-server must already listen at NATS_URL;
 * with STORE=mongo every process opens MONGODB_URL, with LIMITER=redis the gateway REDIS_URL
 * (README "The scale-out stack on one machine"; test/api-scale-out.test.ts runs it, two of each, on FerretDB).
 */
const group = spawnProcesses(Bun.env, undefined, { inherit: true })
const stop = () => void group.stop().then(() => process.exit(0))
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
