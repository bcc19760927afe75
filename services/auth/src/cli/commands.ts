import { AUTH_SUBJECTS } from '@lr/proto'
import { grantUntil, oneOf, usageError } from './args'

const TIERS = ['basic', 'advanced', 'pro', 'business'] as const
const ROLES = ['admin', 'writer', 'viewer'] as const
const SCOPES = ['personal', 'business'] as const

type Flags = Record<string, string>

interface Command {
  subject: string
  required: string[]
  optional?: string[]
  /** The request payload; throws a usage error for values the flags cannot carry. */
  payload(flags: Flags): unknown
}

/** The admin commands of docs/decisions.md §2, keyed by "<group> <action>". */
export const COMMANDS: Record<string, Command> = {
  'account create': {
    subject: AUTH_SUBJECTS.accountCreate,
    required: ['email', 'tier'],
    payload: (f) => ({ email: f.email, tier: oneOf('tier', f.tier!, TIERS) }),
  },
  'account update': {
    subject: AUTH_SUBJECTS.accountUpdate,
    required: ['account'],
    optional: ['tier', 'api-grant-until'],
    payload(f) {
      if (f.tier === undefined && f['api-grant-until'] === undefined)
        throw usageError('account update needs --tier and/or --api-grant-until')
      return {
        account_id: f.account,
        ...(f.tier !== undefined && { tier: oneOf('tier', f.tier, TIERS) }),
        ...(f['api-grant-until'] !== undefined && { api_grant_until: grantUntil(f['api-grant-until']) }),
      }
    },
  },
  'team create': {
    subject: AUTH_SUBJECTS.teamCreate,
    required: ['name', 'admin'],
    payload: (f) => ({ name: f.name, admin: f.admin }),
  },
  'team add-member': {
    subject: AUTH_SUBJECTS.teamAddMember,
    required: ['team', 'account', 'role'],
    payload: (f) => ({ team_id: f.team, account_id: f.account, role: oneOf('role', f.role!, ROLES) }),
  },
  'team remove-member': {
    subject: AUTH_SUBJECTS.teamRemoveMember,
    required: ['team', 'account'],
    payload: (f) => ({ team_id: f.team, account_id: f.account }),
  },
  'key create': {
    subject: AUTH_SUBJECTS.keyCreate,
    required: ['account', 'scope'],
    optional: ['team'],
    payload(f) {
      const scope = oneOf('scope', f.scope!, SCOPES)
      if (scope === 'business' && f.team === undefined) throw usageError('a business key needs --team TEAM_ID')
      if (scope === 'personal' && f.team !== undefined) throw usageError('a personal key belongs to no team: leave --team out')
      return { account_id: f.account, scope, ...(f.team !== undefined && { team_id: f.team }) }
    },
  },
  'key revoke': {
    subject: AUTH_SUBJECTS.keyRevoke,
    required: ['key-id'],
    optional: ['by'],
    payload: (f) => ({ key_id: f['key-id'], ...(f.by !== undefined && { by: f.by }) }),
  },
  'key list': {
    subject: AUTH_SUBJECTS.keyList,
    required: ['account'],
    payload: (f) => ({ account_id: f.account }),
  },
}
