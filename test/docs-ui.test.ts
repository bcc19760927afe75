// /docs renders in a real browser with no internet: headless Chromium, every request that
// leaves the loopback refused, and the operations of the document must show.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'
import { listen } from './harness/listen'
import { type Stack, startInProcessStack } from './harness/stack'

const CHROMIUM = '/usr/bin/chromium'

/** Under CI=true a missing browser is a failure, never a skip (as test/harness/servers.ts does for servers). */
function chromiumSkipReason(): string | null {
  if (existsSync(CHROMIUM)) return null
  if (Bun.env.CI === 'true') throw new Error(`${CHROMIUM} is not installed; CI must install it (see .ci/setup)`)
  return `${CHROMIUM} is not installed (apt-get install -y chromium)`
}

const skip = chromiumSkipReason()
if (skip) describe.skip(`Swagger UI in headless Chromium (${skip})`, () => {})
else {
  describe('Swagger UI in headless Chromium, offline', () => {
    let stack: Stack
    let server: ReturnType<typeof listen>
    let browser: Browser

    beforeAll(async () => {
      stack = await startInProcessStack()
      server = listen(stack)
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      })
    }, 60_000)
    afterAll(async () => {
      await browser?.close()
      await server?.stop()
      await stack?.stop()
    })

    for (const path of ['/docs', '/docs/']) {
      it(`renders every operation at ${path} from this server alone`, async () => {
        const page = await browser.newPage()
        const refused: string[] = []
        const failed: string[] = []
        await page.route('**/*', (route) => {
          const host = new URL(route.request().url()).hostname
          if (host === '127.0.0.1' || host === 'localhost') return route.continue()
          refused.push(route.request().url())
          return route.abort('internetdisconnected')
        })
        page.on('requestfailed', (request) => failed.push(request.url()))
        page.on('response', (response) => {
          if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`)
        })
        try {
          await page.goto(`${server.url}${path}`)
          // Swagger UI draws one block per operation once it has loaded and parsed /docs/json.
          const operation = page.locator('#operations-Static_QR_codes-listStaticCodes')
          await operation.waitFor({ state: 'visible', timeout: 20_000 })
          expect(await operation.locator('.opblock-summary-path').innerText()).toBe('/v1/qrcodes')
          // One block per operation of the document the server serves.
          const doc = (await (await fetch(`${server.url}/docs/json`)).json()) as { paths: Record<string, Record<string, unknown>> }
          const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])
          const operations = Object.values(doc.paths).flatMap((item) => Object.keys(item).filter((key) => METHODS.has(key))).length
          expect(operations).toBeGreaterThan(20)
          expect(await page.locator('.opblock').count()).toBe(operations)
          expect(await page.locator('.errors-wrapper').count()).toBe(0)
          expect({ refused, failed }).toEqual({ refused: [], failed: [] })
        } finally {
          await page.close()
        }
      }, 40_000)
    }
  })
}
