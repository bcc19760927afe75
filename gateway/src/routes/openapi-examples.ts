import type { CodeBreakdown, DynamicRecord, StaticRecord } from '@lr/proto'

/** Example values of the OpenAPI document, typed by the contracts so they cannot fall behind them. */

const at = 1735689600
const staticRecord: StaticRecord = {
  qr_id: 'qr_V1StGXR8Z5jdHi6B',
  url: 'https://example.com/menu',
  name: 'Menu',
  style: { fg: '#000000' },
  tags: ['menu', 'print'],
  status: 'active',
  team_id: null,
  created_by: 'acct_4fQx9Lm2Pz',
  created_at: at,
  updated_at: at,
}
const dynamicRecord: DynamicRecord = {
  code: 'a1B2c3D4',
  short_url: 'http://localhost:3001/a1B2c3D4',
  destination_url: 'https://example.com/spring',
  name: 'Poster',
  style: {},
  tags: [],
  status: 'active',
  team_id: null,
  created_by: 'acct_4fQx9Lm2Pz',
  created_at: at,
  updated_at: at,
}
/** A team code after a writer's PATCH of its destination: unchanged, with the change awaiting review. */
const pendingDynamic: DynamicRecord = {
  ...dynamicRecord,
  team_id: 'team_Qm3x8Zr1',
  updated_at: at + 60,
  pending_change: { destination_url: 'https://example.com/summer', redirect_rules: [], requested_by: 'acct_7hWr2Kd9Qs', requested_at: at + 60 },
}
const breakdown: CodeBreakdown = {
  code: 'a1B2c3D4',
  total_scans: 42,
  unique_scans: 30,
  daily: [{ date: '2025-01-01', scans: 40, unique_scans: 29 }, { date: '2025-01-02', scans: 2, unique_scans: 2 }],
  countries: [{ country: 'DE', scans: 30 }, { country: 'unknown', scans: 12 }],
  devices: [{ device: 'mobile', scans: 35 }, { device: 'desktop', scans: 7 }],
  os: [{ os: 'iOS', scans: 20 }, { os: 'Android', scans: 15 }, { os: 'Windows', scans: 7 }],
  browsers: [{ browser: 'Mobile Safari', scans: 20 }, { browser: 'Chrome', scans: 22 }],
  fallback_scans: 0,
}

export const examples = {
  static: {
    record: { menu: staticRecord },
    list: { page: { qrcodes: [staticRecord], next_cursor: 'c2VxOjQy' }, last: { qrcodes: [], next_cursor: null } },
    created: { created: { created: [staticRecord] } },
    create: { menu: { url: 'https://example.com/menu', name: 'Menu', style: { fg: '#000000' }, tags: ['menu', 'print'] } },
    batch: { two: { qrcodes: [{ url: 'https://a.example', name: 'A' }, { url: 'https://b.example', name: 'B' }] } },
    patch: { rename: { name: 'Lunch menu' }, approve: { status: 'active' }, retag: { tags: ['print', 'summer-2025'] } },
    deleted: { deleted: { deleted: staticRecord.qr_id } },
  },
  dynamic: {
    record: { poster: dynamicRecord, pending: pendingDynamic },
    list: { page: { dynqrcodes: [dynamicRecord], next_cursor: 'c2VxOjQy' }, last: { dynqrcodes: [], next_cursor: null } },
    created: { created: { created: [dynamicRecord] } },
    create: { poster: { destination_url: 'https://example.com/spring', name: 'Poster' } },
    batch: {
      array: [{ destination_url: 'https://a.example', name: 'A' }, { destination_url: 'https://b.example', name: 'B' }],
      object: { dynqrcodes: [{ destination_url: 'https://a.example', name: 'A' }] },
    },
    patch: {
      move: { destination_url: 'https://example.com/summer' },
      approve: { status: 'active' },
      devices: { redirect_rules: [{ os: 'ios', destination_url: 'https://apps.apple.com/app/id1' }, { os: 'android', destination_url: 'https://play.google.com/store/apps/details?id=x' }] },
    },
    review: { approve: { decision: 'approve' }, reject: { decision: 'reject' } },
    deleted: { deleted: { deleted: dynamicRecord.code } },
  },
  analytics: {
    summary: { summary: { analytics: [{ code: 'a1B2c3D4', total_scans: 42, unique_scans: 30 }, { code: 'Zx9Yw8Vu', total_scans: 0, unique_scans: 0 }] } },
    breakdown: { breakdown },
  },
}
