import { runServiceProcess } from '@lr/platform/service-process'
import { startAuth } from './start'

// Process entry of the auth service when TRANSPORT=nats: config, NATS bus (queue `auth`), store,
// and on SIGTERM/SIGINT unsubscribe, close the store and the bus, exit 0.
await runServiceProcess('auth', startAuth)
