import { AccountCreateRequest, AccountListRequest, AccountShowRequest, AccountUpdateRequest, AUTH_QUEUE, AUTH_SUBJECTS, type Bus, decode, KeyCreateRequest, KeyListRequest, KeyRevokeRequest, TeamCreateRequest, TeamMemberRequest, TeamRemoveMemberRequest, TeamShowRequest, VerifyRequest } from '@lr/proto'
import type { AuthService } from './service'

type Subject = (typeof AUTH_SUBJECTS)[keyof typeof AUTH_SUBJECTS]

/** Serves every auth subject in queue group `auth`; returns a function that unsubscribes them all. */
export function serveAuth(bus: Bus, service: AuthService): () => void {
  const routes: Record<Subject, (payload: unknown) => Promise<unknown>> = {
    [AUTH_SUBJECTS.verify]: async (p) => service.verify(decode(VerifyRequest, p).key),
    [AUTH_SUBJECTS.accountCreate]: async (p) => service.accountCreate(decode(AccountCreateRequest, p)),
    [AUTH_SUBJECTS.accountUpdate]: async (p) => service.accountUpdate(decode(AccountUpdateRequest, p)),
    [AUTH_SUBJECTS.accountShow]: async (p) => service.accountShow(decode(AccountShowRequest, p)),
    [AUTH_SUBJECTS.accountList]: async (p) => service.accountList(decode(AccountListRequest, p)),
    [AUTH_SUBJECTS.teamCreate]: async (p) => service.teamCreate(decode(TeamCreateRequest, p)),
    [AUTH_SUBJECTS.teamShow]: async (p) => service.teamShow(decode(TeamShowRequest, p)),
    [AUTH_SUBJECTS.teamAddMember]: async (p) => service.teamAddMember(decode(TeamMemberRequest, p)),
    [AUTH_SUBJECTS.teamRemoveMember]: async (p) => service.teamRemoveMember(decode(TeamRemoveMemberRequest, p)),
    [AUTH_SUBJECTS.keyCreate]: async (p) => service.keyCreate(decode(KeyCreateRequest, p)),
    [AUTH_SUBJECTS.keyRevoke]: async (p) => service.keyRevoke(decode(KeyRevokeRequest, p)),
    [AUTH_SUBJECTS.keyList]: async (p) => service.keyList(decode(KeyListRequest, p)),
  }
  const unsubscribes = Object.entries(routes).map(([subject, handler]) => bus.serve(subject, handler, { queue: AUTH_QUEUE }))
  return () => unsubscribes.forEach((unsubscribe) => unsubscribe())
}
