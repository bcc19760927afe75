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

  it('says what a setting takes: the choices, the URL kind, the form of a list', () => {
    const message = (env: Record<string, string>) => {
      try {
        loadConfig(env)
      } catch (error) {
        return (error as Error).message
      }
      return 'accepted'
    }
    expect(message({ LOG_LEVEL: 'INFO' })).toBe('invalid setting LOG_LEVEL="INFO": must be one of fatal, error, warn, info, debug, trace, silent')
    expect(message({ TRANSPORT: 'udp' })).toBe('invalid setting TRANSPORT="udp": must be one of memory, nats')
    expect(message({ REDIS_URL: 'bad' })).toBe('invalid setting REDIS_URL="bad": must be a redis:// or rediss:// URL')
    expect(message({ REDIS_URL: 'rediss//:s3cret@host' })).toBe('invalid setting REDIS_URL="rediss//***@host": must be a redis:// or rediss:// URL')
    expect(message({ REDIS_URL: 'redis://:s3cret@host:99999' })).toBe('invalid setting REDIS_URL="redis://***@host:99999": is not a URL')
    expect(message({ NATS_URL: 'not a url' })).toBe('invalid setting NATS_URL="not a url": "not a url" is not a server URL (nats://host:port, several separated by commas)')
    expect(message({ STORE: 'mongo', MONGODB_URL: 'localhost:27017' })).toBe('invalid setting MONGODB_URL="localhost:27017": must be a mongodb:// or mongodb+srv:// URL')
    expect(message({ CURSOR_SECRET: 'short' })).toStartWith('invalid setting CURSOR_SECRET=(hidden): ')
    expect(message({ VISITOR_HASH_KEY: 'short' })).toStartWith('invalid setting VISITOR_HASH_KEY=(hidden): ')
    expect(message({ CORS_ORIGINS: 'https://a.example/app' })).toBe('invalid setting CORS_ORIGINS="https://a.example/app": must be *, or origins (scheme://host[:port], no path) separated by commas')
    for (const accepted of <Record<string, string>[]>[{ NATS_URL: '127.0.0.1:4222' }, { NATS_URL: 'nats://a:4222, tls://b:4222' }, { STORE: 'mongo', MONGODB_URL: 'mongodb://a:1,b:2/db?replicaSet=rs' }, { REDIS_URL: 'rediss://:pw@redis.example:6380/2' }])
      expect(message(accepted)).toBe('accepted')
  })

  it('keeps SHORT_BASE_URL a prefix a code can follow: a trailing / dropped, a query, fragment or user refused', () => {
    expect(loadConfig({ SHORT_BASE_URL: 'https://qr.example/' }).SHORT_BASE_URL).toBe('https://qr.example')
    expect(loadConfig({ SHORT_BASE_URL: 'https://qr.example/go/' }).SHORT_BASE_URL).toBe('https://qr.example/go')
    for (const [value, why] of [
      ['https://s.example#f', 'must have no query or fragment'],
      ['https://s.example/go?x=1', 'must have no query or fragment'],
      ['https://s.example?', 'must have no query or fragment'],
      ['https://s.example:99999', 'is not a URL'],
      ['ftp://s.example', 'must be an http or https URL'],
    ])
      expect(() => loadConfig({ SHORT_BASE_URL: value! })).toThrow(`invalid setting SHORT_BASE_URL=${JSON.stringify(value)}: ${why}`)
    expect(() => loadConfig({ SHORT_BASE_URL: 'https://user@s.example' })).toThrow('invalid setting SHORT_BASE_URL="https://***@s.example": must have no user name or password')
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
