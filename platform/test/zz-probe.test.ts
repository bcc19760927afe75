import { it } from 'bun:test'
import { connectMongo } from '@lr/platform/mongo'
import { startFerretDb } from '../../test/harness/ferretdb'
it('probe', async () => {
  for (let i = 0; i < 40; i++) {
    const server = await startFerretDb()
    const port = new URL(server.url).port
    const conn = await connectMongo(server.url)
    const client = conn.getClient()
    const events: string[] = []
    const t0 = performance.now()
    if (process.env.EVENTS) for (const ev of ['serverHeartbeatStarted', 'serverHeartbeatSucceeded', 'serverHeartbeatFailed', 'connectionPoolCleared', 'connectionClosed', 'connectionCheckOutFailed', 'commandStarted', 'commandFailed', 'commandSucceeded', 'serverDescriptionChanged'])
      client.on(ev as any, (e: any) => events.push(`${((performance.now() - t0) / 1000).toFixed(2)} ${ev} ${e.commandName ?? ''} ${e.failure?.message ?? e.reason ?? e.newDescription?.type ?? ''}`))
    const things = conn.db!.collection<{ _id: string }>('things')
    await things.insertOne({ _id: 'a' })
    await things.insertOne({ _id: 'a' }).catch(() => {})
    events.push('--- stop')
    await server.stop()
    events.push(`--- stopped ${((performance.now() - t0) / 1000).toFixed(2)}`)
    let done = false
    const find = things.findOne({ _id: 'a' }).then(() => 'ok', (e) => e.name).finally(() => (done = true))
    const r = await Promise.race([find, Bun.sleep(15_000).then(() => 'HANG')])
    if (r === 'HANG') {
      console.log(i, 'HANG; ss:', Bun.spawnSync(['sh', '-c', `ss -tanp | grep ':${port}'`]).stdout.toString())
      console.log(events.join('\n'))
      const r2 = await Promise.race([find, Bun.sleep(30_000).then(() => 'STILL HANG')])
      console.log('after 45s:', r2, Bun.spawnSync(['sh', '-c', `ss -tanp | grep ':${port}'`]).stdout.toString())
      console.log(events.slice(-10).join('\n'))
      break
    }
    console.log(i, r, ((performance.now() - t0) / 1000).toFixed(2))
    await conn.close(true)
  }
}, 1_500_000)
