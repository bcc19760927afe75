import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigSchema } from '@lr/proto'

/**
 * README "Configuration" is what an operator reads to set the processes up: its table must list
 * exactly the settings loadConfig reads (proto/src/config.ts), with their defaults and bounds, so
 * a setting added, renamed or re-ranged in the code without the README fails here. The table of
 * docs/decisions.md §1, which config.ts names as the list of its settings, must name the same.
 */
const read = (file: string) => readFileSync(join(import.meta.dir, '..', file), 'utf8')

interface Row {
  /** The whole table row, for the bounds it states. */
  text: string
  /** The default cell's value for this setting (the cell is `a / b / c` for a row of three). */
  default: string
}

/**
 * The settings of the table under `heading`, with their rows; a `LIMIT_X_DAILY` / `_PER_SECOND`
 * row names three, as does one naming three settings in full.
 */
function documentedSettings(text: string, heading: string): Map<string, Row> {
  const start = text.indexOf(`\n${heading}\n`)
  if (start < 0) throw new Error(`no section ${heading}`)
  const section = text.slice(start, text.indexOf('\n## ', start + 1))
  const rows = new Map<string, Row>()
  for (const line of section.split('\n').filter((l) => /^\| `[A-Z]/.test(l))) {
    const [names, defaults] = line.split(' | ')
    const [first, ...suffixes] = [...names!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!)
    const values = defaults!.split(' / ')
    const prefix = first!.slice(0, first!.lastIndexOf('_'))
    ;[first!, ...suffixes.map((other) => (other.startsWith('_') ? prefix + other : other))].forEach((name, i) => rows.set(name, { text: line, default: values[i] ?? values[0]! }))
  }
  return rows
}

const properties = ConfigSchema.properties as Record<string, { default?: unknown; minimum?: number; maximum?: number; minLength?: number }>
const PORT_SETTINGS = ['PORT', 'SHORT_PORT', 'HEALTH_PORT']
/** Defaults the table describes rather than quotes: the public development key is no value to copy. */
const DESCRIBED_DEFAULTS = ['VISITOR_HASH_KEY']

describe('README "Configuration"', () => {
  const documented = documentedSettings(read('README.md'), '## Configuration')

  it('lists exactly the settings the code reads', () => {
    expect([...documented.keys()].sort()).toEqual(Object.keys(properties).sort())
  })

  it("states each setting's default as the code has it", () => {
    const wrong = Object.entries(properties)
      .filter(([name, schema]) => schema.default !== undefined && schema.default !== '' && !DESCRIBED_DEFAULTS.includes(name))
      .filter(([name, schema]) => !documented.get(name)?.default.startsWith(`\`${schema.default}\``))
      .map(([name, schema]) => `${name}: code ${schema.default}, README ${documented.get(name)?.default}`)
    expect(wrong).toEqual([])
  })

  it('states every bound a value is refused beyond (but a port\'s 65535 and the 1 of a count)', () => {
    const missing: string[] = []
    for (const [name, schema] of Object.entries(properties)) {
      const row = documented.get(name)?.text ?? ''
      const numbers = [schema.minimum, PORT_SETTINGS.includes(name) ? undefined : schema.maximum].filter((b): b is number => b !== undefined && b > 1)
      for (const bound of numbers) if (!new RegExp(`(^|[^0-9])${bound}([^0-9-]|$)`).test(row)) missing.push(`${name}: ${bound}`)
      if (schema.minLength !== undefined && schema.minLength > 1 && !row.includes(`${schema.minLength} characters`)) missing.push(`${name}: ${schema.minLength} characters`)
    }
    expect(missing).toEqual([])
  })
})

describe('docs/decisions.md §1', () => {
  it('lists exactly the settings the code reads, with their defaults', () => {
    const documented = documentedSettings(read('docs/decisions.md'), '## 1. Processes, ports, configuration')
    expect([...documented.keys()].sort()).toEqual(Object.keys(properties).sort())
    const wrong = Object.entries(properties)
      .filter(([name, schema]) => typeof schema.default === 'number' && !documented.get(name)!.default.startsWith(String(schema.default)))
      .map(([name]) => name)
    expect(wrong).toEqual([])
  })
})
