import { afterEach, beforeEach, describe, expect, it, setSystemTime } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { type ScanBatch, type ScanEvent, scanBatchOf } from '@lr/proto'
import { openScanBatchSpool, openScanSpool } from '@lr/platform/scan-spool'

const event = (n: number, code = 'Code0001'): ScanEvent => ({
  scan_id: `scan-${n}`, code, scanned_at: 1_736_510_400_000 + n, user_agent: 'UA\twith a tab', visitor_id: 'a'.repeat(64), country: 'DE',
})
const batch = (from: number, to: number): ScanBatch => scanBatchOf(Array.from({ length: to - from + 1 }, (_, i) => event(from + i, i % 2 ? 'Code0002' : 'Code0001')))
/** A pid no process has: its files are adopted. */
const GONE = 2 ** 22 + 12_345

describe('the scan batch spool', () => {
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'lr-batch-spool-'))
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  it('gives back batches as they were written, oldest segment first, counting their scans', () => {
    const spool = openScanBatchSpool(dir, { maxBytes: 1 << 20, segmentBytes: 600 })
    const written = [batch(1, 3), batch(4, 4), batch(5, 9)]
    for (const b of written) expect(spool.append(b)).toBe(true)
    expect(spool.size()).toBe(9)
    const back: ScanBatch[] = []
    for (let taken = spool.take(); taken.length > 0; taken = spool.take()) back.push(...taken)
    expect(back).toEqual(written)
    expect([spool.size(), spool.bytes(), readdirSync(dir)]).toEqual([0, 0, []])
  })

  it('adopts a gone process\'s file by its scans, leaving out a last line cut by a crash', () => {
    const whole = [batch(1, 2), batch(3, 5)].map((b) => `${b.count}\t${b.codes}\t${b.events}\n`).join('')
    const cut = `${batch(6, 8).count}\t${batch(6, 8).codes}\t${batch(6, 8).events.slice(0, 40)}`
    writeFileSync(join(dir, `000001767225600000-${GONE}-0.jsonl`), whole + cut)
    const spool = openScanBatchSpool(dir, { maxBytes: 1 << 20 })
    expect(spool.size()).toBe(5)
    expect(spool.take()).toEqual([batch(1, 2), batch(3, 5)])
  })

  it('refuses a batch past maxBytes', () => {
    const spool = openScanBatchSpool(dir, { maxBytes: 700 })
    expect(spool.append(batch(1, 2))).toBe(true)
    expect(spool.append(batch(3, 4))).toBe(false)
    expect(spool.size()).toBe(2)
  })

  it('counts nothing a write the disk refused did not write, and writes nothing more to that file', () => {
    const spool = openScanBatchSpool(dir, { maxBytes: 1 << 20 })
    const first = join(dir, `${String(1_767_225_600_000).padStart(15, '0')}-${process.pid}-0.jsonl`)
    setSystemTime(new Date(1_767_225_600_000))
    try {
      symlinkSync('/dev/full', first) // the file the spool opens next is a full disk
      expect(spool.append(batch(1, 3))).toBe(true)
      expect(() => spool.flush()).toThrow('ENOSPC')
      expect([spool.size(), spool.bytes()]).toEqual([0, 0])
      // What the full disk left of that file (nothing), and a disk with room again.
      unlinkSync(first)
      writeFileSync(first, '')
      expect(spool.append(batch(4, 5))).toBe(true)
      spool.close()
      expect(readdirSync(dir).sort()).toEqual([basename(first), `${String(1_767_225_600_000).padStart(15, '0')}-${process.pid}-1.jsonl`])
      expect([...spool.take(), ...spool.take()]).toEqual([batch(4, 5)])
      expect([spool.size(), readdirSync(dir)]).toEqual([0, []])
    } finally {
      setSystemTime()
    }
  })

  it('leaves the single-scan spool as it was: one scan a line, a cut last line left out', () => {
    writeFileSync(join(dir, `000001767225600000-${GONE}-0.jsonl`), `${JSON.stringify(event(1))}\n${JSON.stringify(event(2)).slice(0, 30)}`)
    const spool = openScanSpool(dir, { maxBytes: 1 << 20 })
    expect(spool.append(event(3))).toBe(true)
    expect(spool.size()).toBe(2)
    expect([...spool.take(), ...spool.take()]).toEqual([event(1), event(3)])
  })
})
