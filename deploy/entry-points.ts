/**
 * One entry point per process of TRANSPORT=nats mode, shared by the container's entry
 * (deploy/entry.ts) and the local launcher (deploy/local). Services first: the gateway needs them.
 */
export const ENTRY_POINTS = {
  auth: 'services/auth/src/main.ts',
  records: 'services/records/src/main.ts',
  dynamic: 'services/dynamic/src/main.ts',
  analytics: 'services/analytics/src/main.ts',
  webhooks: 'services/webhooks/src/main.ts',
  resolver: 'services/dynamic/src/resolver/main.ts',
  gateway: 'gateway/src/main.ts',
} as const
export type ProcessName = keyof typeof ENTRY_POINTS
