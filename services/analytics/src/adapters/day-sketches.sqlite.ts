import type { Database } from 'bun:sqlite'
import { addVisitor, newSketch, type Sketch, sketchOf } from '../sketch'

/**
 * The stored visitor sketch of a (code, day), or one built from the day's visitor rows when the
 * day has none (a day stored before sketches existed), which is then stored unless a writer
 * stored one meanwhile: a writer's sketch is built from the same rows plus its own visitors.
 */
export function daySketches(db: Database): (code: string, day: string) => Sketch {
  const stored = db.prepare<{ regs: Uint8Array }, [string, string]>('SELECT regs FROM day_sketches WHERE code = ? AND day = ?')
  const visitors = db.prepare<{ visitor_id: string }, [string, string]>('SELECT visitor_id FROM day_visitors WHERE code = ? AND day = ?')
  const keep = db.prepare<never, [string, string, Uint8Array]>('INSERT OR IGNORE INTO day_sketches (code, day, regs) VALUES (?, ?, ?)')
  return (code, day) => {
    const row = stored.get(code, day)
    if (row) return sketchOf(row.regs)
    const sketch = newSketch()
    for (const { visitor_id } of visitors.iterate(code, day)) addVisitor(sketch, visitor_id)
    keep.run(code, day, sketch)
    return sketch
  }
}
