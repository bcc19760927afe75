import { describe, expect, it } from 'bun:test'
import { join } from 'node:path'

describe("a log line's err (the process's own logger, its JSON lines read back)", () => {
  it('names the class of the error and its code, never "Object": for the fields errorFields made, those that crossed a thread, and an Error itself', async () => {
    const run = Bun.spawn(['bun', 'run', join(import.meta.dir, 'log.probe.ts')], { stdout: 'pipe', stderr: 'pipe' })
    const [out, err] = [await new Response(run.stdout).text(), await new Response(run.stderr).text()]
    expect([await run.exited, err]).toEqual([0, ''])
    const lines = out.trim().split('\n').map((line) => JSON.parse(line))
    expect(lines.map((line) => [line.msg, line.err.type, line.err.code, line.err.message])).toEqual([
      ['sqlite', 'SQLiteError', 'SQLITE_READONLY', 'attempt to write a readonly database'],
      ['bus reply', 'AppError', 'unavailable', 'the records store is unreachable'],
      ['system call', 'Error', 'ENOENT', expect.stringContaining('no such file or directory')],
      ['subclass', 'StartupError', undefined, 'port taken'],
      ['from a thread', 'TypeError', undefined, 'not a function'],
      ['thrown value', 'string', undefined, 'a thrown string'],
      ['error itself', 'RangeError', undefined, 'out of range'],
    ])
    // The stack stays where there was one.
    expect(lines[0].err.stack).toStartWith('SQLiteError: attempt to write a readonly database')
    expect(lines[6].err.stack).toStartWith('RangeError: out of range')
  })
})
