import { Elysia } from 'elysia'

// Baseline of the API: bare Elysia routes with no auth, limiter, bus or store, answering the
// same JSON the product answered (captured from it once, served as objects so Elysia serialises
// them as the gateway does). POSTs parse their body like the gateway. PORT, BODIES (a JSON file:
// {list, create, batch}) from env.
const bodies = JSON.parse(await Bun.file(Bun.env.BODIES!).text()) as { list: unknown; create: unknown; batch: unknown }
const app = new Elysia()
  .get('/v1/dynqrcodes', () => bodies.list)
  .post('/v1/dynqrcodes', ({ body, set }) => {
    if (typeof body !== 'object' || body === null) throw new Error('no JSON body')
    set.status = 201
    return bodies.create
  })
  .post('/v1/qrcodes/batch', ({ body, set }) => {
    if (typeof body !== 'object' || body === null) throw new Error('no JSON body')
    set.status = 201
    return bodies.batch
  })
  .listen({ port: Number(Bun.env.PORT ?? 0), hostname: '127.0.0.1' })
console.log(`[bare-elysia] serving on :${app.server?.port}`)
process.on('SIGTERM', () => {
  void app.stop().then(() => process.exit(0))
})
