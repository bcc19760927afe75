/** Resolves true once `work` settles, or false after `ms` (its timer never holds the process). */
export async function within(ms: number, work: Promise<unknown>): Promise<boolean> {
  let timer: Timer | undefined
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))
  try {
    return await Promise.race([work.then(() => true, () => true), late])
  } finally {
    clearTimeout(timer)
  }
}
