import type { Subprocess } from 'bun'

/**
 * Stops a server the harness started: SIGTERM, then SIGKILL if it has not exited within
 * `graceMs`. A server that ignores SIGTERM (FerretDB once did, mid-test) would otherwise hang
 * the suite's teardown until its timeout and leave the process behind.
 */
export async function stopProcess(proc: Subprocess, graceMs = 5_000): Promise<void> {
  proc.kill('SIGTERM')
  let timer: Timer | undefined
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)))
  try {
    if ((await Promise.race([proc.exited, late])) === 'late') {
      proc.kill('SIGKILL')
      await proc.exited
    }
  } finally {
    clearTimeout(timer)
  }
}
