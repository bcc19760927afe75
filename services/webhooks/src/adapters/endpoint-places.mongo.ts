import type { mongo } from 'mongoose'

/** One taken place of a library's endpoint limit: `_id` the library and the place's number. */
interface PlaceDoc {
  _id: string
  library: string
  endpoint: string
  /** When taken, by the database server's clock (ms): a place whose endpoint never came is freed after PLACE_GRACE_MS. */
  at: number
}

/** How long a place may wait for its endpoint (a create killed between the two) before another create may take it. */
const PLACE_GRACE_MS = 30_000

/**
 * The places of each library's endpoint limit on MongoDB: an endpoint takes one before it is
 * stored and gives it back when deleted. A place is a unique `_id`, and an endpoint holds at
 * most one (unique `endpoint`): FerretDB lets several compare-and-set writers win but enforces
 * unique keys, so of creates at once exactly `limit` find a place, whichever replica runs them.
 * (Counting the endpoints first let 28 of 30 concurrent creates pass a limit of 10.)
 */
export async function mongoEndpointPlaces(db: mongo.Db, endpointsCollection: string, now: () => number) {
  const endpoints = db.collection<{ _id: string; library: string }>(endpointsCollection)
  const places = db.collection<PlaceDoc>('webhook_places')
  await places.createIndex({ endpoint: 1 }, { unique: true })
  await places.createIndex({ library: 1 })
  const isDuplicate = (error: unknown) => (error as { code?: number }).code === 11000

  async function tryPlaces(library: string, endpoint: string, limit: number): Promise<boolean> {
    for (let n = 0; n < limit; n++) {
      try {
        await places.insertOne({ _id: `${library}\n${n}`, library, endpoint, at: now() })
        return true
      } catch (error) {
        if (!isDuplicate(error)) throw error
      }
    }
    return false
  }

  /** Frees the library's places whose endpoint is not there and was not coming (older than the grace). */
  async function freeAbandoned(library: string): Promise<void> {
    for (const place of await places.find({ library, at: { $lt: now() - PLACE_GRACE_MS } }).toArray())
      if (!(await endpoints.findOne({ _id: place.endpoint }, { projection: { _id: 1 } }))) await places.deleteOne({ _id: place._id, endpoint: place.endpoint })
  }

  // Endpoints stored before places existed take theirs (without a limit: they are there already).
  for (const endpoint of await endpoints.find({}, { projection: { _id: 1, library: 1 } }).toArray())
    if (!(await places.findOne({ endpoint: endpoint._id }))) await tryPlaces(endpoint.library, endpoint._id, Number.MAX_SAFE_INTEGER)

  return {
    /** Takes a place of `library` for `endpoint`; false when all `limit` are taken. */
    async take(library: string, endpoint: string, limit: number): Promise<boolean> {
      if (await tryPlaces(library, endpoint, limit)) return true
      await freeAbandoned(library)
      return tryPlaces(library, endpoint, limit)
    },
    /** Gives the endpoint's place back. */
    async release(endpoint: string): Promise<void> {
      await places.deleteOne({ endpoint })
    },
  }
}
