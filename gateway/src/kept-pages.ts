import { type Bus, libraryOf, type ListQuery, type Principal } from '@lr/proto'
import { readKeptList } from '@lr/platform/kept-list'
import { createLru } from '@lr/platform/lru'
import { listPages } from '@lr/platform/metrics'

/** What one gateway keeps at most: pages, and bytes of them. */
export const KEPT_PAGES_LIMITS = { entries: 256, budget: 2 * 1024 * 1024 }

/**
 * List pages this gateway answered, kept with their tags (@lr/platform/kept-list), per kind,
 * library and query. The next list of the same asks its service with the tag, and the page
 * crosses the bus again only when it changed: an unchanged one answers `{"unchanged":true}`,
 * and the gateway sends what it kept. The service decides from its store's change position and
 * the page's exact text, so a write anywhere (any gateway, the admin command line) and a service
 * that presents records otherwise (a new version) both send the new page.
 */
export function createKeptPages(bus: Bus, limits = KEPT_PAGES_LIMITS) {
  const kept = createLru<{ tag: string; page: Uint8Array }>(limits, (entry) => entry.page.byteLength)
  const sent = listPages.labels({ source: 'sent' })
  const reused = listPages.labels({ source: 'kept' })

  /** The JSON bytes of one list page of `subject`, from the service or kept. */
  return async function listPage(subject: string, principal: Principal, query: ListQuery): Promise<Uint8Array> {
    // The library the key authenticated for, and the query as the service reads it: all a page depends on.
    const key = `${subject}\n${libraryOf(principal)}\n${JSON.stringify(query)}`
    const held = kept.get(key)
    const answer = readKeptList(await bus.requestJson(subject, { principal, query, known: held?.tag ?? null }))
    if (answer.unchanged && held) {
      reused.inc()
      return held.page
    }
    if (answer.unchanged) throw new Error(`${subject} answered unchanged to a gateway that kept nothing`)
    sent.inc()
    // A copy: the answer is a view of the bus's message, which must not stay alive with it.
    if (answer.tag === null) kept.delete(key)
    else kept.set(key, { tag: answer.tag, page: answer.page.slice() })
    return answer.page
  }
}
