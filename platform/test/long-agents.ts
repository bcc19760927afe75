import { heapStats } from 'bun:jsc'

/**
 * Heap bytes still held after `judge` was given `count` distinct User-Agents of 15,000 characters
 * (one client can send them: Bun takes headers up to 16 KiB), the agents themselves let go: what a
 * per-agent memo keeps of them.
 */
export function heapKeptByLongAgents(judge: (userAgent: string) => unknown, count = 1000): number {
  const padding = 'a'.repeat(15_000)
  Bun.gc(true)
  const before = heapStats().heapSize
  for (let i = 0; i < count; i++) judge(`Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0 ${i} ${padding}`)
  Bun.gc(true)
  return heapStats().heapSize - before
}
