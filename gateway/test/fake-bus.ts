import { AppError, AUTH_SUBJECTS, type Bus, type Principal } from '@lr/proto'

export const GOOD_KEY = 'lrp_good'
export const PRINCIPAL: Principal = { account_id: 'acct_1', key_id: 'key_1', scope: 'personal', team_id: null, role: 'owner' }

/**
 * A bus that verifies one key (GOOD_KEY) and answers every other subject from `answers`; the
 * gateway under test is real. Every request is recorded, in order, in `requests`.
 */
export function scriptedBus(answers: Record<string, (payload: any) => unknown> = {}) {
  const requests: { subject: string; payload: any }[] = []
  const bus: Bus = {
    maxPayload: 8 << 20,
    async request<T>(subject: string, payload: any): Promise<T> {
      requests.push({ subject, payload })
      if (subject === AUTH_SUBJECTS.verify) {
        if (payload.key === GOOD_KEY) return PRINCIPAL as T
        throw new AppError('forbidden', 'invalid API key')
      }
      const answer = answers[subject]
      if (!answer) throw new AppError('unavailable', `no service answers ${subject}`)
      return (await answer(payload)) as T
    },
    async requestJson(subject: string, payload: unknown) {
      return new TextEncoder().encode(JSON.stringify(await bus.request(subject, payload)))
    },
    serve: () => () => undefined,
    publish: async () => undefined,
    subscribe: () => () => undefined,
    ping: async () => true,
    close: async () => undefined,
  }
  return { bus, requests }
}
