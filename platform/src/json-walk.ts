/** What `judge` sees: a value of the parsed body, or one of its member names (`name: true`). */
export interface JsonNode {
  value: unknown
  /** 1 for the body itself, 2 for its fields, ... */
  depth: number
  /** True when `value` is a member name (a string), not a value. */
  name: boolean
}

/**
 * The first problem found and where, as a client writes it: `style.k[1]`, `qrcodes[1].name`, `[0]`
 * ('' for the body itself). For a member name, the place of the object that holds it.
 */
export interface JsonProblem {
  place: string
  reason: string
  name: boolean
}

interface Pending {
  value: unknown
  depth: number
  key: string | number | undefined
  parent: Pending | undefined
}

/** The place of a node as a client writes it; built only for the node that failed. */
function placeOf(node: Pending): string {
  const keys: (string | number)[] = []
  for (let at: Pending | undefined = node; at?.key !== undefined; at = at.parent) keys.push(at.key)
  return keys.reverse().reduce<string>((place, key) => (typeof key === 'number' ? `${place}[${key}]` : place ? `${place}.${key}` : key), '')
}

/**
 * Walks a value JSON.parse made, in document order, and returns the first node `judge` gives a
 * reason for. Iterative, so any depth costs no stack; `judge` may stop the descent (a depth
 * bound) by answering for the container itself. Member names are judged before their values.
 */
export function firstInJson(body: unknown, judge: (node: JsonNode) => string | undefined): JsonProblem | undefined {
  const pending: Pending[] = [{ value: body, depth: 1, key: undefined, parent: undefined }]
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value, depth } = next
    const reason = judge({ value, depth, name: false })
    if (reason) return { place: placeOf(next), reason, name: false }
    if (value === null || typeof value !== 'object') continue
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push({ value: value[i], depth: depth + 1, key: i, parent: next })
      continue
    }
    const keys = Object.keys(value)
    for (const key of keys) {
      const nameReason = judge({ value: key, depth: depth + 1, name: true })
      if (nameReason) return { place: placeOf(next), reason: nameReason, name: true }
    }
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!
      pending.push({ value: (value as Record<string, unknown>)[key], depth: depth + 1, key, parent: next })
    }
  }
  return undefined
}
