import type { Database } from 'bun:sqlite'
import { addVisitor, newSketch, type Sketch, sketchOf } from '../sketch'

/** A (code, day)'s visitor sketch as read: `built` when the day had none stored and it was made from the day's visitor rows. */
export interface ReadSketch { sketch: Sketch; built: boolean }

/**
 * Reads the stored visitor sketch of a (code, day), or builds one from the day's visitor rows
 * when the day has none (a day stored before sketches existed). Writes nothing: `keep` stores a
 * built one, unless a writer stored one meanwhile (a writer's is built from the same rows plus
 * its own visitors).
 */
export function daySketchStore(db: Database): { read(code: string, day: string): ReadSketch; keep(code: string, day: string, sketch: Sketch): void } {
  const stored = db.prepare<{ regs: Uint8Array }, [string, string]>('SELECT regs FROM day_sketches WHERE code = ? AND day = ?')
  const visitors = db.prepare<{ visitor_id: string }, [string, string]>('SELECT visitor_id FROM day_visitors WHERE code = ? AND day = ?')
  const keep = db.prepare<never, [string, string, Uint8Array]>('INSERT OR IGNORE INTO day_sketches (code, day, regs) VALUES (?, ?, ?)')
  return {
    read(code, day) {
      const row = stored.get(code, day)
      if (row) return { sketch: sketchOf(row.regs), built: false }
      const sketch = newSketch()
      for (const { visitor_id } of visitors.iterate(code, day)) addVisitor(sketch, visitor_id)
      return { sketch, built: true }
    },
    keep: (code, day, sketch) => void keep.run(code, day, sketch),
  }
}

/** The visitor sketch of a (code, day), a built one kept at once (the writes, inside their transaction). */
export function daySketches(db: Database): (code: string, day: string) => Sketch {
  const sketches = daySketchStore(db)
  return (code, day) => {
    const { sketch, built } = sketches.read(code, day)
    if (built) sketches.keep(code, day, sketch)
    return sketch
  }
}
