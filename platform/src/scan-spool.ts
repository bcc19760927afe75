import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import type { ScanBatch, ScanEvent } from '@lr/proto'

/**
 * Scans that cannot be handed on yet, on local disk: append-only segment files of one item a
 * line, read back oldest first. The resolver's spool (single scans) bounds its memory through an
 * outage of the broker (README "Operations"); a one-process scan source's (batches) holds what
 * does not fit its buffer while its consumer is behind (scan-source.ts).
 *
 * Files are `<ms since epoch>-<pid>-<seq>.jsonl`, so the name orders them. A process owns the
 * files it writes; at open it adopts those of a process that is gone (a crash or a restart),
 * by an atomic rename, so two processes sharing a directory never read one file twice. A scan
 * read back twice anyway (a crash between reading and handing on) is deduplicated by JetStream
 * and by analytics on its scan_id.
 */
export interface Spool<T> {
  /** Appends an item; false when the size bound is reached (the caller drops it and counts it). */
  append(item: T): boolean
  /** The oldest segment's items, taken off disk, or [] when the spool is empty. */
  take(): T[]
  /**
   * The oldest segment's items, left on disk until `dropOldest`: a caller that may die while
   * handing them on (or fail to) loses none; some may be handed on twice.
   */
  peek(): T[]
  /** Removes the oldest segment (the one `peek` read). */
  dropOldest(): void
  /** Scans waiting on disk (an item's `weight`). */
  size(): number
  /** Bytes on disk. */
  bytes(): number
  /**
   * Writes out what appends buffered (up to 64 KiB) to the file: from then on it survives the
   * process being killed (`kill -9`, an OOM kill), though not the machine losing power. Throws
   * when the write fails (its disk full): what did not reach the file is then no longer counted
   * in `size`, so a caller learns what was lost from `size` before and after. `append` (which
   * flushes a full buffer) and `close` throw the same way.
   */
  flush(): void
  /** Writes out what is buffered and closes the current file. */
  close(): void
  /**
   * Writes a file of one write buffer's size into the spool's directory (made again if it was
   * removed) and removes it: throws where the spool's own writes would (its disk full, a
   * directory it may not write, a file in its place). How a caller whose writes failed learns
   * that the spool takes them again, without risking a scan on it.
   */
  probe(): void
}

export type ScanSpool = Spool<ScanEvent>
/** Batches of scans as the one-process bus carries them (ScanBatch): a source's overflow. */
export type ScanBatchSpool = Spool<ScanBatch>

/** How a spool writes its items, one per line (text without a newline), and reads them back. */
interface LineFormat<T> {
  encode(item: T): string
  /** undefined for a line that is not one (it is skipped). */
  decode(line: string): T | undefined
  /** Scans an item holds. */
  weight(item: T): number
  /** The same, read off a written line without decoding it (adopting a large spool at start-up reads no scan). */
  lineWeight(line: string): number
}

export interface ScanSpoolOptions {
  /** Bound on the bytes on disk; appends beyond it are refused. */
  maxBytes: number
  /** A segment is closed and a new one begun at this size. Default 4 MiB. */
  segmentBytes?: number
}

interface Segment {
  path: string
  bytes: number
  /** Scans in it; counted when written, or when adopted. */
  scans: number
}

const WRITE_BUFFER_BYTES = 64 * 1024

const isAlive = (pid: number) => {
  if (pid === process.pid) return false // a file of an earlier process with our pid (a restarted container)
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** One JSON item a line, each counted as one, or as `weight` says (a written line is then read to weigh it). */
function jsonLines<T>(weight?: (item: T) => number): LineFormat<T> {
  const decode = (line: string) => {
    try {
      return JSON.parse(line) as T
    } catch {
      return undefined
    }
  }
  if (!weight) return { encode: (item) => JSON.stringify(item), decode, weight: () => 1, lineWeight: () => 1 }
  const lineWeight = (line: string) => {
    const item = decode(line)
    return item === undefined ? 0 : weight(item)
  }
  return { encode: (item) => JSON.stringify(item), decode, weight, lineWeight }
}

const SCAN_LINES = jsonLines<ScanEvent>()

/**
 * A batch as one line: `count TAB codes TAB events`. Its events stay the JSON text they came as
 * (JSON.stringify writes no newline), so spilling a batch neither parses nor writes a scan.
 */
const BATCH_LINES: LineFormat<ScanBatch> = {
  encode: (batch) => `${batch.count}\t${batch.codes}\t${batch.events}`,
  decode(line) {
    const first = line.indexOf('\t')
    const second = line.indexOf('\t', first + 1)
    const count = Number(line.slice(0, first))
    if (first < 0 || second < 0 || !Number.isSafeInteger(count) || count < 0) return undefined
    return { count, codes: line.slice(first + 1, second), events: line.slice(second + 1) }
  },
  weight: (batch) => batch.count,
  lineWeight: (line) => Number(line.slice(0, line.indexOf('\t'))) || 0,
}

/** A spool of single scans: the resolver's, through a broker outage. */
export const openScanSpool = (dir: string, opts: ScanSpoolOptions): ScanSpool => openSpool(dir, opts, SCAN_LINES)

/** A spool of scan batches: a one-process scan source's, past its buffer (scan-source.ts). */
export const openScanBatchSpool = (dir: string, opts: ScanSpoolOptions): ScanBatchSpool => openSpool(dir, opts, BATCH_LINES)

/**
 * Any JSON item a line: record events held while JetStream is away (record-event-hold.ts). `size`
 * counts each item as one, or as `weight` says (the events of a batch); with `weight`, the lines a
 * stopped process left are parsed at open to weigh them.
 */
export const openJsonSpool = <T>(dir: string, opts: ScanSpoolOptions, weight?: (item: T) => number): Spool<T> => openSpool<T>(dir, opts, jsonLines<T>(weight))

/** The lines of a file that were written whole: a last line without its newline was cut by a crash. */
function wholeLines(text: string): string[] {
  const lines = text.split('\n')
  lines.pop() // '' after the last newline, or the cut line
  return lines.filter((line) => line !== '')
}

function openSpool<T>(dir: string, opts: ScanSpoolOptions, format: LineFormat<T>): Spool<T> {
  const { maxBytes, segmentBytes = 4 * 1024 * 1024 } = opts
  mkdirSync(dir, { recursive: true })
  const segments: Segment[] = []
  let seq = 0
  let writing: (Segment & { fd: number }) | undefined
  let buffered = ''
  /** Scans in `buffered`. */
  let bufferedScans = 0
  let total = 0
  let scans = 0

  // Adopt what a process that is gone left behind.
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.jsonl')).sort()) {
    const pid = Number(name.split('-')[1])
    if (isAlive(pid)) continue
    const adopted = join(dir, `${name.slice(0, -'.jsonl'.length)}.adopted-${process.pid}-${seq++}.jsonl`)
    try {
      renameSync(join(dir, name), adopted)
    } catch {
      continue // another process adopted it first
    }
    const bytes = statSync(adopted).size
    let weight = 0
    for (const line of wholeLines(readFileSync(adopted, 'utf8'))) weight += format.lineWeight(line)
    const segment = { path: adopted, bytes, scans: weight }
    segments.push(segment)
    total += bytes
    scans += segment.scans
  }

  function flush(): void {
    if (!writing || buffered === '') return
    const data = Buffer.from(buffered)
    const scansInData = bufferedScans
    buffered = ''
    bufferedScans = 0
    let written = 0
    try {
      // A full disk takes what fits (a short write), then refuses.
      while (written < data.length) written += writeSync(writing.fd, data, written)
    } catch (error) {
      lose(writing, data, written, scansInData)
      throw error
    }
  }

  /**
   * A failed write: the lines it did not finish are not in the spool. The file now ends with a
   * cut line, which reading leaves out, so it is closed and nothing is written after it.
   */
  function lose(segment: Segment & { fd: number }, data: Buffer, written: number, scansInData: number): void {
    let kept = 0
    for (const line of wholeLines(data.subarray(0, written).toString())) kept += format.lineWeight(line)
    const lostBytes = data.length - written
    segment.bytes -= lostBytes
    segment.scans -= scansInData - kept
    total -= lostBytes
    scans -= scansInData - kept
    writing = undefined
    try {
      closeSync(segment.fd)
    } catch {
      // The data is what matters, and it is accounted for.
    }
    const { fd: _fd, ...closed } = segment
    segments.push(closed)
  }

  function finishSegment(): void {
    if (!writing) return
    flush()
    closeSync(writing.fd)
    const { fd: _fd, ...segment } = writing
    segments.push(segment)
    writing = undefined
  }

  return {
    append(item) {
      const line = `${format.encode(item)}\n`
      const size = Buffer.byteLength(line)
      if (total + size > maxBytes) return false
      if (!writing || writing.bytes >= segmentBytes) {
        finishSegment()
        const path = join(dir, `${String(Date.now()).padStart(15, '0')}-${process.pid}-${seq++}.jsonl`)
        writing = { path, bytes: 0, scans: 0, fd: openSync(path, 'a') }
      }
      const weight = format.weight(item)
      buffered += line
      bufferedScans += weight
      writing.bytes += size
      writing.scans += weight
      total += size
      scans += weight
      if (buffered.length >= WRITE_BUFFER_BYTES) flush()
      return true
    },

    take() {
      const items = this.peek()
      this.dropOldest()
      return items
    },

    peek() {
      if (segments.length === 0) finishSegment()
      const segment = segments[0]
      if (!segment) return []
      const items: T[] = []
      for (const line of wholeLines(readFileSync(segment.path, 'utf8'))) {
        const item = format.decode(line)
        if (item !== undefined) items.push(item)
      }
      return items
    },

    dropOldest() {
      const segment = segments.shift()
      if (!segment) return
      // Off the count first: a file that cannot be removed is no longer this spool's either.
      total -= segment.bytes
      scans -= segment.scans
      unlinkSync(segment.path)
    },

    size: () => scans,
    bytes: () => total,
    flush,
    close() {
      finishSegment()
    },
    probe() {
      mkdirSync(dir, { recursive: true })
      // Not `.jsonl`: no process ever adopts it.
      const path = join(dir, `.probe-${process.pid}`)
      try {
        writeFileSync(path, Buffer.alloc(WRITE_BUFFER_BYTES))
      } finally {
        rmSync(path, { force: true })
      }
    },
  }
}
