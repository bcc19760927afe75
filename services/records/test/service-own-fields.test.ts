import { ownFieldsContract } from '@lr/library-records/testing/own-fields'
import { personal, setup } from './fixtures'

ownFieldsContract({
  service: () => setup().service,
  principal: personal,
  valid: { url: 'https://example.com/menu', name: 'Menu' },
  listKey: 'qrcodes',
  idField: 'qr_id',
  batchOf: (items) => ({ qrcodes: items }),
})
