import mongoose, { type Connection } from 'mongoose'

/** One mongoose connection per process; every Mongo adapter of that process shares it. */
export async function connectMongo(url: string): Promise<Connection> {
  const connection = mongoose.createConnection(url, { serverSelectionTimeoutMS: 5000, autoIndex: false })
  await connection.asPromise()
  return connection
}
