import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteAuthStore } from '../../src/adapters/auth-store.sqlite'
import { authStoreContract } from '../auth-store.contract'

authStoreContract('sqlite', async () => createSqliteAuthStore(openSqlite(':memory:')))
