import type { Database } from 'bun:sqlite'
import { addVisitor, newSketch, type Sketch, SKETCH_MIN_VISITORS, sketchOf } from '../sketch'

/**
 * A (code, day)'s visitor sketch as read: `stored` when it was; else made from the day's visitor
 * rows, and `built` when it is worth keeping (more than SKETCH_MIN_VISITORS of them; a smaller
 * day is built again at each read, at about the cost of reading a stored one).
 */
export interface ReadSketch { sketch: Sketch; stored: boolean; built: boolean }

/**
 * Reads the stored visitor sketch of a (code, day), or builds one from the day's visitor rows
 * when the day has none (a day of SKETCH_MIN_VISITORS visitors or fewer, or one stored before
 * sketches existed). Writes nothing: `keep` stores a built one, unless a writer stored one
 * meanwhile (a writer's is built from the same rows plus its own visitors).
 */
export function daySketchStore(db: Database): { read(code: string, day: string): ReadSketch; keep(code: string, day: string, sketch: Sketch): void } {
  const stored = db.prepare<{ regs: Uint8Array }, [string, string]>('SELECT regs FROM day_sketches WHERE code = ? AND day = ?')
  const visitors = db.prepare<{ visitor_id: string }, [string, string]>('SELECT visitor_id FROM day_visitors WHERE code = ? AND day = ?')
  const keep = db.prepare<never, [string, string, Uint8Array]>('INSERT OR IGNORE INTO day_sketches (code, day, regs) VALUES (?, ?, ?)')
  return {
    read(code, day) {
      const row = stored.get(code, day)
      if (row) return { sketch: sketchOf(row.regs), stored: true, built: false }
      const sketch = newSketch()
      let rows = 0
      for (const { visitor_id } of visitors.iterate(code, day)) {
        addVisitor(sketch, visitor_id)
        rows++
      }
      return { sketch, stored: false, built: rows > SKETCH_MIN_VISITORS }
    },
    keep: (code, day, sketch) => void keep.run(code, day, sketch),
  }
}

/**
 * The writes, inside their transaction: the stored visitor sketch of a (code, day), one built from
 * its visitor rows kept at once, or null while the day has SKETCH_MIN_VISITORS visitors or fewer
 * (none is stored for it).
 */
export function daySketches(db: Database): (code: string, day: string) => Sketch | null {
  const sketches = daySketchStore(db)
  return (code, day) => {
    const { sketch, stored, built } = sketches.read(code, day)
    if (built) sketches.keep(code, day, sketch)
    return stored || built ? sketch : null
  }
}
