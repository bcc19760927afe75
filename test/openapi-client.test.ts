// A client generated from the served OpenAPI document is one an integrator can use: its types
// compile a real program under strict tsc, and that program pages, creates and reads a batch
// error against the running product. Either failing fails the test.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript'
import { freshMember, type Member } from './harness/fixtures'
import { listen } from './harness/listen'
import { type Stack, startInProcessStack } from './harness/stack'

const ROOT = join(import.meta.dir, '..')

/** What an integrator writes against the generated types: no cast, no any. */
const PROGRAM = `
import createClient from 'openapi-fetch'
import type { components, paths } from './api'

type StaticRecord = components['schemas']['StaticRecord']
type BatchItemError = components['schemas']['BatchItemError']

const [baseUrl, key] = Bun.argv.slice(2) as [string, string]
const client = createClient<paths>({ baseUrl, headers: { 'x-api-key': key } })

// A batch of five, all or nothing.
const items = [1, 2, 3, 4, 5].map((n) => ({ url: \`https://example.com/\${n}\`, name: \`Code \${n}\` }))
const created = await client.POST('/v1/qrcodes/batch', { body: { qrcodes: items }, headers: { 'Idempotency-Key': 'typed-client-1' } })
if (!created.data) throw new Error(\`batch failed: \${created.response.status}\`)
const createdIds: string[] = created.data.created.map((record: StaticRecord) => record.qr_id)

// Every page, two records at a time, following next_cursor until it is null.
const listed: string[] = []
let pages = 0
let cursor: string | undefined
do {
  const page = await client.GET('/v1/qrcodes', { params: { query: { limit: 2, cursor, updated_since: 0 } } })
  if (!page.data) throw new Error(\`list failed: \${page.response.status}\`)
  listed.push(...page.data.qrcodes.map((record) => record.qr_id))
  cursor = page.data.next_cursor ?? undefined
  pages++
} while (cursor)

// A batch with one bad item: nothing is created, and the failing item is named by its index.
const refused = await client.POST('/v1/qrcodes/batch', { body: { qrcodes: [{ url: 'https://ok.example', name: 'ok' }, { url: 'ftp://nope.example', name: 'bad' }] } })
if (refused.response.status !== 400 || !refused.error || !('errors' in refused.error)) throw new Error('expected a 400 naming the failing items')
const failing: BatchItemError[] = refused.error.errors

// Dynamic codes: a bare-array batch, a filtered list, and the analytics of a range.
const dynamic = await client.POST('/v1/dynqrcodes/batch', { body: [{ destination_url: 'https://example.com/d', name: 'D' }] })
const code = dynamic.data?.created[0]?.code
if (!code) throw new Error('dynamic batch failed')
const active = await client.GET('/v1/dynqrcodes', { params: { query: { status: 'active', limit: 10 } } })
const stats = await client.GET('/v1/dynqrcodes/{code}/analytics', { params: { path: { code }, query: { from: '2025-01-01' } } })
// A page's items are records or, in a list of changes (include_deleted), tombstones: narrow first.
const first = active.data?.dynqrcodes[0]
const status: 'active' | 'draft' | undefined = first && 'status' in first ? first.status : undefined

console.log(JSON.stringify({
  createdIds, listed, pages,
  failing: failing.map(({ index, error }) => ({ index, error })),
  activeCodes: active.data?.dynqrcodes.map((record) => record.code), status,
  totalScans: stats.data?.total_scans,
}))
`

const TSCONFIG = {
  compilerOptions: {
    strict: true, noUncheckedIndexedAccess: true, noEmit: true, skipLibCheck: true,
    target: 'ESNext', module: 'Preserve', moduleResolution: 'bundler', lib: ['ESNext'], types: ['bun'],
  },
  files: ['program.ts'],
}

async function run(cmd: string[], cwd: string) {
  const proc = Bun.spawn(cmd, { cwd, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

describe('a client generated from /docs/json', () => {
  let stack: Stack
  let server: ReturnType<typeof listen>
  let member: Member
  let dir: string

  beforeAll(async () => {
    stack = await startInProcessStack()
    server = listen(stack)
    member = await freshMember(stack)
    dir = mkdtempSync(join(tmpdir(), 'lr-client-'))
    // The program resolves openapi-fetch and Bun's types from the repository's dependencies.
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  }, 30_000)
  afterAll(async () => {
    await server?.stop()
    await stack?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('generates with openapi-typescript, type-checks under strict tsc and runs against the server', async () => {
    const doc = (await (await fetch(`${server.url}/docs/json`)).json()) as OpenAPI3
    writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(doc)))
    writeFileSync(join(dir, 'program.ts'), PROGRAM)
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG))

    const tsc = await run([join(ROOT, 'node_modules/.bin/tsc'), '-p', 'tsconfig.json'], dir)
    expect({ code: tsc.code, output: tsc.stdout + tsc.stderr }).toEqual({ code: 0, output: '' })

    const program = await run(['bun', 'run', 'program.ts', server.url, member.key], dir)
    expect({ code: program.code, stderr: program.stderr }).toEqual({ code: 0, stderr: '' })
    const out = JSON.parse(program.stdout)
    expect(out.createdIds).toHaveLength(5)
    expect(out.listed).toEqual(out.createdIds)
    expect(out.pages).toBe(3)
    expect(out.failing).toEqual([{ index: 1, error: expect.stringContaining('url must be an absolute http or https URL') }])
    expect(out.activeCodes).toHaveLength(1)
    expect(out.status).toBe('active')
    expect(out.totalScans).toBe(0)
  }, 120_000)
})
