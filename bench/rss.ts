import { readFileSync } from 'node:fs'

/** A field of /proc/<pid>/status in bytes (VmRSS, VmHWM), or NaN when the process is gone. */
export function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) * 1024 : Number.NaN
  } catch {
    return Number.NaN
  }
}

/**
 * Samples a process's resident memory every `everyMs` while a run lasts. `stop` gives the
 * highest sample and the kernel's high-water mark (VmHWM: the peak over the process's life,
 * which also catches a spike between samples).
 */
export function sampleRss(pid: number, everyMs = 20) {
  let peak = statusBytes(pid, 'VmRSS')
  const start = peak
  const timer = setInterval(() => {
    const now = statusBytes(pid, 'VmRSS')
    if (now > peak) peak = now
  }, everyMs)
  return {
    stop() {
      clearInterval(timer)
      return { start, peakSampled: peak, hwm: statusBytes(pid, 'VmHWM') }
    },
  }
}
