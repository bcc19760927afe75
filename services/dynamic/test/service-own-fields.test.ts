import { ownFieldsContract } from '@lr/library-records/testing/own-fields'
import { personal, setup } from './fixtures'

ownFieldsContract({
  service: () => setup().service,
  principal: personal,
  valid: { destination_url: 'https://example.com/menu', name: 'Menu' },
  listKey: 'dynqrcodes',
  idField: 'code',
  batchOf: (items) => items,
})
