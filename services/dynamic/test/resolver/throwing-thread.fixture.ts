// A Worker that throws what it is sent, uncaught, as a resolver thread's bug would: what Bun then
// hands the main thread is only the printed error (thread-start-failure.test.ts).
declare const self: Worker
self.onmessage = ({ data }: MessageEvent<{ type: 'RangeError' | 'Error'; message: string; code?: string }>) => {
  const error = data.type === 'RangeError' ? new RangeError(data.message) : new Error(data.message)
  throw data.code === undefined ? error : Object.assign(error, { code: data.code })
}
