import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import type { ScanEvent } from '@lr/proto'

/**
 * Scans the resolver could not hand to JetStream yet, on local disk: append-only JSON-lines
 * segment files, read back oldest first. It bounds the resolver's memory through an outage of
 * the broker (README "Operations"): what does not fit the in-memory buffer waits here.
 *
 * Files are `<ms since epoch>-<pid>-<seq>.jsonl`, so the name orders them. A process owns the
 * files it writes; at open it adopts those of a process that is gone (a crash or a restart),
 * by an atomic rename, so two resolvers sharing a directory never read one file twice. A scan
 * read back twice anyway (a crash between reading and publishing) is deduplicated by JetStream
 * and by analytics on its scan_id.
 */
export interface ScanSpool {
  /** Appends a scan; false when the size bound is reached (the caller drops it and counts it). */
  append(event: ScanEvent): boolean
  /** The oldest segment's scans, taken off disk, or [] when the spool is empty. */
  take(): ScanEvent[]
  /** Scans waiting on disk. */
  size(): number
  /** Bytes on disk. */
  bytes(): number
  /** Writes out what is buffered and closes the current file. */
  close(): void
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

const countLines = (text: string) => {
  let n = 0
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++
  return n
}

export function openScanSpool(dir: string, opts: ScanSpoolOptions): ScanSpool {
  const { maxBytes, segmentBytes = 4 * 1024 * 1024 } = opts
  mkdirSync(dir, { recursive: true })
  const segments: Segment[] = []
  let seq = 0
  let writing: (Segment & { fd: number }) | undefined
  let buffered = ''
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
    const segment = { path: adopted, bytes, scans: countLines(readFileSync(adopted, 'utf8')) }
    segments.push(segment)
    total += bytes
    scans += segment.scans
  }

  function flush(): void {
    if (!writing || buffered === '') return
    const data = buffered
    buffered = ''
    writeSync(writing.fd, data)
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
    append(event) {
      const line = `${JSON.stringify(event)}\n`
      const size = Buffer.byteLength(line)
      if (total + size > maxBytes) return false
      if (!writing || writing.bytes >= segmentBytes) {
        finishSegment()
        const path = join(dir, `${String(Date.now()).padStart(15, '0')}-${process.pid}-${seq++}.jsonl`)
        writing = { path, bytes: 0, scans: 0, fd: openSync(path, 'a') }
      }
      buffered += line
      writing.bytes += size
      writing.scans++
      total += size
      scans++
      if (buffered.length >= WRITE_BUFFER_BYTES) flush()
      return true
    },

    take() {
      if (segments.length === 0) finishSegment()
      const segment = segments.shift()
      if (!segment) return []
      const events: ScanEvent[] = []
      for (const line of readFileSync(segment.path, 'utf8').split('\n')) {
        if (line === '') continue
        try {
          events.push(JSON.parse(line) as ScanEvent)
        } catch {
          // a line cut short by a crash while it was written: the rest of the file is good
        }
      }
      unlinkSync(segment.path)
      total -= segment.bytes
      scans -= segment.scans
      return events
    },

    size: () => scans,
    bytes: () => total,
    close() {
      finishSegment()
    },
  }
}
