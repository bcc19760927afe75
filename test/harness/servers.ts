/**
 * Real servers for tests. Under CI=true a missing binary is a failure, never a skip: the suites
 * that need them must run there.
 */
export const hasBinary = (name: string) => Bun.which(name) !== null

export function skipReason(binary: string): string | null {
  if (hasBinary(binary)) return null
  if (Bun.env.CI === 'true') throw new Error(`${binary} is not installed; CI must install it (see .ci/run)`)
  return `${binary} is not installed (apt-get install -y ${binary})`
}
