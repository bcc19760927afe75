import { expect } from 'bun:test'

/**
 * The files a fresh Bun process has loaded once `file` is imported: for tests that keep a
 * Worker's modules few (every module a Worker loads is resident in its own heap).
 */
export async function modulesLoadedBy(file: string, cwd: string): Promise<string[]> {
  const script = `await import(${JSON.stringify(file)}); console.log(JSON.stringify(Object.keys(require.cache))); process.exit(0)`
  const child = Bun.spawn(['bun', '-e', script], { cwd, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  expect({ code, err }).toEqual({ code: 0, err: '' })
  return JSON.parse(out.trim().split('\n').at(-1)!)
}
