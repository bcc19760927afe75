/** Temporary: the Mongo server for tests (replaced by the FerretDB harness on merge). */
export async function mongoUrlForTests(): Promise<string | { skip: string }> {
  return Bun.env.MONGODB_URL ?? { skip: 'MONGODB_URL is not set' }
}
