import { mongo } from 'mongoose'
import { keyOf } from './analytics-journal.mongo'
import type { AnalyticsCollections } from './analytics-collections.mongo'
import { addVisitor, newSketch, type Sketch, SKETCH_MIN_VISITORS, sketchOf, visitorsByDay } from '../sketch'

type Session = mongo.ClientSession | undefined
const bytesOf = (regs: mongo.Binary) => regs.buffer.subarray(0, regs.position)

/**
 * Visitor sketches per (code, day) in Mongo (sketch.ts): `_id` = keyOf(code, day), `regs` the
 * registers as binary, stored only for a day of more than SKETCH_MIN_VISITORS visitors. A day
 * without one (a smaller day, or one stored before sketches existed) gets one built from its
 * visitor documents.
 */
export function mongoSketches(c: AnalyticsCollections) {
  /** The day's sketch from its visitor documents, and whether it is worth storing (more than SKETCH_MIN_VISITORS). */
  async function built(code: string, day: string, session: Session): Promise<{ sketch: Sketch; keep: boolean }> {
    const sketch = newSketch()
    let documents = 0
    for await (const { visitor_id } of c.dayVisitors.find({ code, day }, { projection: { visitor_id: 1 }, session })) {
      addVisitor(sketch, visitor_id)
      documents++
    }
    return { sketch, keep: documents > SKETCH_MIN_VISITORS }
  }

  async function load(code: string, day: string, session: Session): Promise<Sketch | null> {
    const doc = await c.daySketches.findOne({ _id: keyOf(code, day) }, { session })
    return doc ? sketchOf(bytesOf(doc.regs)) : null
  }

  return {
    /**
     * Adds a batch's new day visitors, already inserted as visitor documents, to their days'
     * sketches. Adding is idempotent (a replayed journal adds them again harmlessly); only the
     * ingest lease holder writes, so the read-modify-write has no concurrent writer.
     */
    async add(newDayVisitors: { code: string; day: string; visitor_id: string }[], session: Session): Promise<void> {
      for (const { code, day, visitors } of visitorsByDay(newDayVisitors)) {
        // Built from the day's visitor documents, this batch's included, once they pass SKETCH_MIN_VISITORS.
        let sketch = await load(code, day, session)
        if (!sketch) {
          const made = await built(code, day, session)
          if (!made.keep) continue
          sketch = made.sketch
        }
        for (const visitor of visitors) addVisitor(sketch, visitor)
        await c.daySketches.replaceOne({ _id: keyOf(code, day) }, { code, day, regs: new mongo.Binary(sketch) }, { upsert: true, session })
      }
    },

    /**
     * The sketch of each day; one missing is built, and stored when worth it unless a writer
     * stored one meanwhile (the writer's is built from the same documents plus its own visitors).
     */
    async ofDays(code: string, days: string[]): Promise<Sketch[]> {
      const stored = new Map<string, Sketch>()
      for await (const doc of c.daySketches.find({ code, day: { $in: days } })) stored.set(doc.day, sketchOf(bytesOf(doc.regs)))
      return Promise.all(days.map(async (day) => {
        const found = stored.get(day)
        if (found) return found
        const { sketch, keep } = await built(code, day, undefined)
        if (keep) await c.daySketches.updateOne({ _id: keyOf(code, day) }, { $setOnInsert: { code, day, regs: new mongo.Binary(sketch) } }, { upsert: true })
        return sketch
      }))
    },
  }
}
