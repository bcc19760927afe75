import type { Connection } from './destination'

/** How a connect fails when nothing reached the receiver: the host's next address is tried. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL'])

/**
 * POSTs to the first of `connections` (a host's addresses, in the resolver's order) that takes
 * the connection: a refused or unreachable address moves on to the next, as a client resolving
 * the name itself would; anything else (an answer, the timeout, a failure once connected) is the
 * attempt's outcome. Each connection carries the endpoint's name as Host and, over TLS, as SNI
 * and the certificate's name (connectionsOf, ./destination.ts).
 */
export async function postTo(connections: readonly Connection[], init: RequestInit & { headers: Record<string, string> }): Promise<Response> {
  for (let i = 0; ; i++) {
    const { url, host, servername } = connections[i]!
    try {
      return await fetch(url, { ...init, headers: host ? { ...init.headers, host } : init.headers, ...(servername && { tls: { servername } }) })
    } catch (error) {
      if (i >= connections.length - 1 || !NOT_CONNECTED.has((error as { code?: string })?.code ?? '')) throw error
    }
  }
}
