import {
  Account, AccountList, AUTH_SUBJECTS, CreatedKey, KEY_NAME_MAX, KeyList, KeyRevoked, LIMIT_DEFAULT, LIMIT_MAX, MemberRemoved, Membership, Team, TEAM_NAME_MAX, TeamDetails,
} from '@lr/proto'
import { badEmail, newAccountEmail } from '../rules'
import { BAD_ACCOUNT_CURSOR, emailOfAccountCursor } from '../account-cursor'
import { looksLikeKey } from '../secret'
import { grantUntil, integerIn, nameOf, oneOf, usageError } from './args'

const TIERS = ['basic', 'advanced', 'pro', 'business'] as const
const ROLES = ['admin', 'writer', 'viewer'] as const
const SCOPES = ['personal', 'business'] as const

type Flags = Record<string, string>

/** One flag of a command, as its help shows it. */
export interface Flag {
  name: string
  /** The value's placeholder in the synopsis (`EMAIL`). */
  value: string
  help: string
  required?: boolean
}

/** What the help reads of a @lr/proto schema to list the fields a command prints. */
export interface Printed {
  properties?: Record<string, Printed>
  items?: Printed
  const?: unknown
  [keyword: string]: unknown
}

export interface Command {
  subject: string
  /** One line for the tool's help. */
  summary: string
  flags: Flag[]
  /** A flag whose value may also be given as a bare word (`team show Marketing`). */
  positional?: string
  /** The schema of what it prints; the command's help lists its fields. */
  prints: Printed
  /** The request payload; throws a usage error for values the flags cannot carry. */
  payload(flags: Flags): unknown
  /**
   * May run where the deployment has no store yet, and so make it (STORE=sqlite: auth.sqlite):
   * the quick start's first command, before `bun start` ever ran. Every other command needs what
   * only an existing store holds, so it is refused there rather than make an empty one.
   */
  createsStore?: true
}

/** A cursor `account list` printed, else a usage error, as the service would refuse it. */
function accountCursor(cursor: string): string {
  if (emailOfAccountCursor(cursor) === null) throw usageError(BAD_ACCOUNT_CURSOR)
  return cursor
}

/**
 * `key revoke`'s key: exactly one of --key-id and --key, each of its own shape. A secret is never
 * echoed (these lines land in terminals and CI logs); a secret passed as --key-id is named as such,
 * where the service would only have said that no key has that id.
 */
function keyToRevoke(keyId: string | undefined, secret: string | undefined): { key_id: string } | { key: string } {
  if ((keyId === undefined) === (secret === undefined)) throw usageError('give one of --key-id KEY_ID and --key SECRET')
  if (keyId !== undefined) {
    if (/^lr[pb]_/.test(keyId)) throw usageError("--key-id takes a key's id (key_...); to revoke a key by its secret, pass the secret as --key")
    return { key_id: keyId }
  }
  if (!looksLikeKey(secret!)) throw usageError('--key is not an API key of this product (lrp_ or lrb_ and 32 letters and digits)')
  return { key: secret! }
}

/** An address the service would take, as typed (it trims and lowers it itself). */
function emailOf(email: string): string {
  if (newAccountEmail(email) === null) throw usageError(badEmail(email))
  return email
}

const account: Flag = { name: 'account', value: 'ACCOUNT_ID', help: 'the account (acct_...)', required: true }

/** The admin commands of docs/decisions.md §2, keyed by "<group> <action>". */
export const COMMANDS: Record<string, Command> = {
  'account create': {
    subject: AUTH_SUBJECTS.accountCreate,
    summary: 'create an account',
    flags: [
      { name: 'email', value: 'EMAIL', help: 'its email, unique (stored trimmed, in lower case)', required: true },
      { name: 'tier', value: 'TIER', help: `${TIERS.join('|')}; basic has no API access`, required: true },
    ],
    prints: Account,
    // The service checks the address too; here a typo is a usage error before any store is made.
    payload: (f) => ({ email: emailOf(f.email!), tier: oneOf('tier', f.tier!, TIERS) }),
    createsStore: true,
  },
  'account update': {
    subject: AUTH_SUBJECTS.accountUpdate,
    summary: "change an account's tier or temporary API grant",
    flags: [
      account,
      { name: 'tier', value: 'TIER', help: TIERS.join('|') },
      { name: 'api-grant-until', value: 'EPOCH|none', help: 'API access until this epoch second for a tier without it; none clears it' },
    ],
    prints: Account,
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
  'account show': {
    subject: AUTH_SUBJECTS.accountShow,
    summary: 'show one account, by email or id',
    flags: [
      { name: 'email', value: 'EMAIL', help: 'its email (any case)' },
      { name: 'account', value: 'ACCOUNT_ID', help: 'or its id' },
    ],
    prints: Account,
    payload(f) {
      if ((f.email === undefined) === (f.account === undefined)) throw usageError('account show needs --email or --account (one of them)')
      return f.email !== undefined ? { email: f.email } : { account_id: f.account }
    },
  },
  'account list': {
    subject: AUTH_SUBJECTS.accountList,
    summary: 'list every account, by email',
    flags: [
      { name: 'limit', value: 'N', help: `accounts per page, 1 to ${LIMIT_MAX} (default ${LIMIT_DEFAULT})` },
      { name: 'cursor', value: 'CURSOR', help: "the previous page's next_cursor; page until it is null" },
    ],
    prints: AccountList,
    payload: (f) => ({
      ...(f.limit !== undefined && { limit: integerIn('limit', f.limit, 1, LIMIT_MAX) }),
      ...(f.cursor !== undefined && { cursor: accountCursor(f.cursor) }),
    }),
  },
  'team create': {
    subject: AUTH_SUBJECTS.teamCreate,
    summary: 'create a team with its first admin',
    flags: [
      { name: 'name', value: 'NAME', help: 'the team name', required: true },
      { name: 'admin', value: 'ACCOUNT_ID', help: 'its first admin; the account must be of tier business', required: true },
    ],
    prints: Team,
    payload: (f) => ({ name: nameOf('name', f.name!, TEAM_NAME_MAX), admin: f.admin }),
  },
  'team show': {
    subject: AUTH_SUBJECTS.teamShow,
    summary: 'show a team and its members, by id or name',
    flags: [{ name: 'team', value: 'TEAM_ID|NAME', help: 'the team id, or its name when one team bears it (also as a bare word)', required: true }],
    positional: 'team',
    prints: TeamDetails,
    payload: (f) => ({ team: f.team }),
  },
  'team add-member': {
    subject: AUTH_SUBJECTS.teamAddMember,
    summary: "add an account to a team, or change its role",
    flags: [
      { name: 'team', value: 'TEAM_ID', help: 'the team', required: true },
      account,
      { name: 'role', value: 'ROLE', help: ROLES.join('|'), required: true },
    ],
    prints: Membership,
    payload: (f) => ({ team_id: f.team, account_id: f.account, role: oneOf('role', f.role!, ROLES) }),
  },
  'team remove-member': {
    subject: AUTH_SUBJECTS.teamRemoveMember,
    summary: 'remove an account from a team',
    flags: [{ name: 'team', value: 'TEAM_ID', help: 'the team', required: true }, account],
    prints: MemberRemoved,
    payload: (f) => ({ team_id: f.team, account_id: f.account }),
  },
  'key create': {
    subject: AUTH_SUBJECTS.keyCreate,
    summary: 'create an API key; its secret is printed only here',
    flags: [
      { ...account, help: 'the account the key belongs to' },
      { name: 'scope', value: 'SCOPE', help: 'personal (its own library) or business (the team library)', required: true },
      { name: 'team', value: 'TEAM_ID', help: 'the team of a business key; the account must be its writer or admin' },
      { name: 'name', value: 'NAME', help: `a label for people ("CI", "Zapier"), 1 to ${KEY_NAME_MAX} characters` },
    ],
    prints: CreatedKey,
    payload(f) {
      const scope = oneOf('scope', f.scope!, SCOPES)
      if (scope === 'business' && f.team === undefined) throw usageError('a business key needs --team TEAM_ID')
      if (scope === 'personal' && f.team !== undefined) throw usageError('a personal key belongs to no team: leave --team out')
      return { account_id: f.account, scope, ...(f.team !== undefined && { team_id: f.team }), ...(f.name !== undefined && { name: nameOf('name', f.name, KEY_NAME_MAX) }) }
    },
  },
  'key revoke': {
    subject: AUTH_SUBJECTS.keyRevoke,
    summary: 'revoke a key, by its id or its secret; the next request with it is refused',
    flags: [
      { name: 'key-id', value: 'KEY_ID', help: 'the key (key_...); or give --key' },
      { name: 'key', value: 'SECRET', help: 'the key by its secret (lrp_... or lrb_...), as a leaked key is found' },
      { name: 'by', value: 'ACCOUNT_ID', help: "who revokes: the key's owner or an admin of its team; left out: the operator" },
    ],
    prints: KeyRevoked,
    payload: (f) => ({ ...keyToRevoke(f['key-id'], f.key), ...(f.by !== undefined && { by: f.by }) }),
  },
  'key list': {
    subject: AUTH_SUBJECTS.keyList,
    summary: "list an account's keys, never their secrets",
    flags: [account],
    prints: KeyList,
    payload: (f) => ({ account_id: f.account }),
  },
}

/** How the tool is run, for its usage lines. */
export const PROGRAM = 'bun run --silent admin'

export const USAGE = `usage: ${PROGRAM} <command> [flags]; commands: ${Object.keys(COMMANDS).join(', ')}; --help for more`

/** The command named by its two words, or a usage error naming what was typed. */
export function findCommand(group: string | undefined, action: string | undefined): { name: string; command: Command } {
  const name = [group, action].filter(Boolean).join(' ')
  if (group && action && Object.hasOwn(COMMANDS, name)) return { name, command: COMMANDS[name]! }
  throw usageError(name ? `unknown command "${name}"; ${USAGE}` : USAGE)
}
