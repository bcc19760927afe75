/**
 * Distinct visitors of a (code, day) as a HyperLogLog sketch: 2^14 one-byte registers (16 KiB),
 * standard error 1.04/sqrt(2^14) ≈ 0.81 %. Sketches of several days merge (register-wise max)
 * into the sketch of their union, so the distinct visitors of a range of days are read from one
 * fixed-size row per day instead of every visitor of every day (BENCHMARKS.md, scenario 7).
 * Adding a visitor twice, or merging a sketch into itself, changes nothing: updates are
 * idempotent, which lets a replayed batch (Mongo journal) add its visitors again.
 *
 * The estimator is Ertl's improved raw estimator ("New cardinality estimation algorithms for
 * HyperLogLog sketches", 2017): unbiased from one visitor to billions without bias tables.
 */
export const SKETCH_PRECISION = 14
const M = 1 << SKETCH_PRECISION
/** Rank bits: the rank of a hash is 1 + the leading zeros of its upper 32 bits, 1..33. */
const Q = 32

export type Sketch = Uint8Array

/**
 * A (code, day) has a stored sketch only once it has more distinct visitors than this. A sketch
 * is 16 KiB whatever it holds, about what 180 of the day's visitor rows take: stored for every day
 * with a scan, it was 16 KiB per code per day of scans (a soak: 165 MB of sketches beside 15 MB of
 * scans, 86 % of the days with 16 visitors or fewer). A day at or under the bound is built from its
 * visitor rows when a range needs it: a year-long range of days of 64 visitors each read in 37 ms,
 * 26 ms from stored sketches (at 256 visitors a day: 180 ms against 59, hence 64).
 */
export const SKETCH_MIN_VISITORS = 64

export const newSketch = (): Sketch => new Uint8Array(M)

/** A sketch from stored bytes (the drivers hand each read its own buffer); a wrong size is a corrupt row. */
export function sketchOf(bytes: Uint8Array): Sketch {
  if (bytes.length !== M) throw new Error(`a visitor sketch has ${M} bytes, got ${bytes.length}`)
  return bytes
}

/** A batch's new day visitors grouped by (code, day): one sketch read and write per day. */
export function visitorsByDay(newDayVisitors: Iterable<{ code: string; day: string; visitor_id: string }>) {
  const byDay = new Map<string, { code: string; day: string; visitors: string[] }>()
  for (const { code, day, visitor_id } of newDayVisitors) {
    const key = `${code}\u0000${day}`
    let entry = byDay.get(key)
    if (!entry) byDay.set(key, (entry = { code, day, visitors: [] }))
    entry.visitors.push(visitor_id)
  }
  return byDay.values()
}

export function addVisitor(sketch: Sketch, visitorId: string): void {
  const hash = Bun.hash.wyhash(visitorId)
  const index = Number(hash & BigInt(M - 1))
  const rank = Math.clz32(Number(hash >> 32n)) + 1
  if (rank > sketch[index]!) sketch[index] = rank
}

/** Merges `source` into `target` (the union of their visitors). */
export function mergeInto(target: Sketch, source: Sketch): void {
  for (let i = 0; i < M; i++) if (source[i]! > target[i]!) target[i] = source[i]!
}

function sigma(x: number): number {
  if (x === 1) return Infinity
  let y = 1
  let z = x
  for (;;) {
    x *= x
    const next = z + x * y
    y += y
    if (next === z) return z
    z = next
  }
}

function tau(x: number): number {
  if (x === 0 || x === 1) return 0
  let y = 1
  let z = 1 - x
  for (;;) {
    x = Math.sqrt(x)
    const previous = z
    y *= 0.5
    z -= (1 - x) ** 2 * y
    if (previous === z) return z / 3
  }
}

/** The estimated number of distinct visitors, rounded. */
export function estimate(sketch: Sketch): number {
  const counts = new Array<number>(Q + 2).fill(0)
  for (let i = 0; i < M; i++) counts[sketch[i]!]!++
  let z = M * tau(1 - counts[Q + 1]! / M)
  for (let k = Q; k >= 1; k--) z = 0.5 * (z + counts[k]!)
  z += M * sigma(counts[0]! / M)
  return Math.round((M * M) / (2 * Math.LN2) / z)
}
