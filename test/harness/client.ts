import type { Stack } from './stack'

export interface ApiResponse {
  status: number
  headers: Headers
  /** Parsed JSON when the response is JSON, else the text. */
  body: any
  text: string
}

export interface CallOptions {
  key?: string | null
  /** Sent as JSON unless `raw` is given. */
  body?: unknown
  /** A body sent exactly as given (malformed JSON, huge bodies...). */
  raw?: string
  headers?: Record<string, string>
}

/** One API call as a client makes it: x-api-key, JSON body, parsed answer. */
export async function call(stack: Stack, method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...(opts.key ? { 'x-api-key': opts.key } : {}) }
  let body: string | undefined
  if (opts.raw !== undefined) body = opts.raw
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body)
    headers['content-type'] = 'application/json'
  }
  const response = await stack.request(path, { method, headers: { ...headers, ...opts.headers }, body })
  const text = await response.text()
  const isJson = response.headers.get('content-type')?.includes('application/json')
  return { status: response.status, headers: response.headers, text, body: isJson && text ? JSON.parse(text) : text }
}
