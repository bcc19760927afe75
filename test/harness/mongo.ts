import { mongoSkipReason, startFerretDb } from './ferretdb'

/**
 * The MongoDB server a scale-out file runs on: MONGODB_URL's, or a FerretDB of its own (stopped
 * with `stop`). `skip` says why there is none (outside CI only; under CI=true a missing ferretdb
 * throws, so the suite fails instead of skipping).
 */
export async function mongoForTests(): Promise<{ url: string; stop(): Promise<void> } | { skip: string }> {
  const skip = mongoSkipReason()
  if (skip) return { skip }
  if (Bun.env.MONGODB_URL) return { url: Bun.env.MONGODB_URL, stop: async () => undefined }
  return startFerretDb()
}
