import { describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { ConfigError, loadConfig } from '../src/config'

describe('loadConfig', () => {
  it('fills every setting of docs/decisions.md §1 with its default', () => {
    expect(loadConfig({})).toMatchObject({
      PORT: 3000, SHORT_PORT: 3001, SHORT_BASE_URL: 'http://localhost:3001', DATA_DIR: './data', TRANSPORT: 'memory',
      NATS_URL: 'nats://127.0.0.1:4222', STORE: 'sqlite', LIMITER: 'memory', REDIS_URL: 'redis://127.0.0.1:6379',
      KEY_ACTIVATION_DELAY_S: 0, LIMIT_PERSONAL_DAILY: 2000, LIMIT_PERSONAL_PER_SECOND: 5, LIMIT_PERSONAL_BURST: 10,
      LIMIT_BUSINESS_DAILY: 10000, LIMIT_BUSINESS_PER_SECOND: 10, LIMIT_BUSINESS_BURST: 20, TRUST_PROXY: 0, HEALTH_PORT: 0,
    })
  })

  it('puts short links on SHORT_PORT unless SHORT_BASE_URL says where they are', () => {
    expect(loadConfig({ SHORT_PORT: '3901' }).SHORT_BASE_URL).toBe('http://localhost:3901')
    expect(loadConfig({ SHORT_PORT: '0' }).SHORT_BASE_URL).toBe('http://localhost:3001')
    expect(loadConfig({ SHORT_PORT: '3901', SHORT_BASE_URL: 'https://qr.example.com' }).SHORT_BASE_URL).toBe('https://qr.example.com')
  })

  it('reads numbers and choices from the environment', () => {
    const config = loadConfig({ PORT: '8080', TRANSPORT: 'nats', TRUST_PROXY: '1', LIMIT_BUSINESS_BURST: '3' })
    expect([config.PORT, config.TRANSPORT, config.TRUST_PROXY, config.LIMIT_BUSINESS_BURST]).toEqual([8080, 'nats', 1, 3])
  })

  it('names the setting that is invalid', () => {
    const cases: Record<string, string>[] = [
      { PORT: 'abc' }, { PORT: '70000' }, { TRANSPORT: 'kafka' }, { STORE: 'postgres' }, { TRUST_PROXY: '2' },
      { LIMIT_PERSONAL_DAILY: '0' }, { SHORT_BASE_URL: 'ftp://x' }, { KEY_ACTIVATION_DELAY_S: '-1' },
    ]
    for (const env of cases) {
      const [name] = Object.keys(env)
      expect(() => loadConfig(env)).toThrow(ConfigError)
      expect(() => loadConfig(env)).toThrow(`invalid setting ${name}=`)
    }
  })

  it('requires MONGODB_URL when STORE=mongo', () => {
    expect(() => loadConfig({ STORE: 'mongo' })).toThrow('STORE=mongo needs MONGODB_URL')
  })

  it('stops a process at start-up with exit code 2 and the setting named', async () => {
    const proc = Bun.spawn(['bun', 'run', join(import.meta.dir, '../../gateway/src/main.ts')], {
      env: { ...process.env, PORT: 'not-a-port' }, stdout: 'pipe', stderr: 'pipe',
    })
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
    expect(code).toBe(2)
    expect(stderr).toContain('invalid setting PORT="not-a-port"')
  })
})
