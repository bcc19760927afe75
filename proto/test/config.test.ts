import { describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { ConfigError, loadConfig } from '../src/config'

/** The message of loadConfig's error for `env`, or `accepted`. */
const message = (env: Record<string, string>) => {
  try {
    loadConfig(env)
  } catch (error) {
    return (error as Error).message
  }
  return 'accepted'
}

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
      { PORT: 'abc' }, { PORT: '70000' }, { TRANSPORT: 'kafka' }, { STORE: 'postgres' }, { TRUST_PROXY: '17' }, { TRUST_PROXY: '-1' },
      { LIMIT_PERSONAL_DAILY: '0' }, { SHORT_BASE_URL: 'ftp://x' }, { KEY_ACTIVATION_DELAY_S: '-1' },
    ]
    for (const env of cases) {
      const [name] = Object.keys(env)
      expect(() => loadConfig(env)).toThrow(ConfigError)
      expect(() => loadConfig(env)).toThrow(`invalid setting ${name}=`)
    }
  })

  it('says what a setting takes: the choices, the URL kind, the form of a list', () => {
    expect(message({ LOG_LEVEL: 'INFO' })).toBe('invalid setting LOG_LEVEL="INFO": must be one of fatal, error, warn, info, debug, trace, silent')
    expect(message({ TRANSPORT: 'udp' })).toBe('invalid setting TRANSPORT="udp": must be one of memory, nats')
    expect(message({ REDIS_URL: 'bad' })).toBe('invalid setting REDIS_URL="bad": must be a redis:// or rediss:// URL')
    expect(message({ REDIS_URL: 'rediss//:s3cret@host' })).toBe('invalid setting REDIS_URL="***@host": must be a redis:// or rediss:// URL')
    expect(message({ REDIS_URL: 'redis://:s3cret@host:99999' })).toBe('invalid setting REDIS_URL="redis://***@host:99999": is not a URL')
    expect(message({ NATS_URL: 'not a url' })).toBe('invalid setting NATS_URL="not a url": "not a url" is not a NATS server (nats://host:port, tls://host:port or host:port, several separated by commas)')
    expect(message({ STORE: 'mongo', MONGODB_URL: 'localhost:27017' })).toBe('invalid setting MONGODB_URL="localhost:27017": must be a mongodb:// or mongodb+srv:// URL')
    expect(message({ CURSOR_SECRET: 'short' })).toStartWith('invalid setting CURSOR_SECRET=(hidden): ')
    expect(message({ VISITOR_HASH_KEY: 'short' })).toStartWith('invalid setting VISITOR_HASH_KEY=(hidden): ')
    expect(message({ CORS_ORIGINS: 'https://a.example/app' })).toBe('invalid setting CORS_ORIGINS="https://a.example/app": must be *, or origins (scheme://host[:port], no path) separated by commas')
    for (const accepted of <Record<string, string>[]>[{ NATS_URL: '127.0.0.1:4222' }, { NATS_URL: 'nats://a:4222, tls://b:4222' }, { STORE: 'mongo', MONGODB_URL: 'mongodb://a:1,b:2/db?replicaSet=rs' }, { REDIS_URL: 'rediss://:pw@redis.example:6380/2' }])
      expect(message(accepted)).toBe('accepted')
  })

  it('never repeats what lies between a URL\'s authority and its last @, whatever the value\'s shape', () => {
    // [settings, how the value starts the line, the secret]
    const cases: [Record<string, string>, string, string][] = [
      [{ STORE: 'mongo', MONGODB_URL: 'mongo://user:pa/ss@h/db' }, 'MONGODB_URL="mongo://***@h/db"', 'pa/ss'],
      [{ STORE: 'mongo', MONGODB_URL: 'mongodb://user:p@ss@h/db x' }, 'MONGODB_URL="mongodb://***@h/db x"', 'p@ss'],
      [{ STORE: 'mongo', MONGODB_URL: 'mongodb://user:p,a/s@s@h1,h2/db x' }, 'MONGODB_URL="mongodb://***@h1,h2/db x"', 'p,a/s@s'],
      [{ NATS_URL: 'user:topsecret@ho st:4222' }, 'NATS_URL="***@ho st:4222": "***@ho st:4222" is not a NATS server', 'topsecret'],
      [{ NATS_URL: 'nats://a:b@n1:4222, u:p@ss@ho st:4222' }, 'NATS_URL="nats://***@ho st:4222": "***@ho st:4222" is not a NATS server', 'p@ss'],
      [{ NATS_URL: 'nats://a:s3cret@n1:4222,http://u:p/w@n2:4222' }, 'NATS_URL="nats://***@n1:4222,http://***@n2:4222": "http://***@n2:4222" is not a NATS server', 's3cret'],
      [{ NATS_URL: 'nats://a:s3cret@n1:4222,http://u:p/w@n2:4222' }, 'NATS_URL=', 'p/w'],
      [{ REDIS_URL: 'redis://:pa ss@w@host' }, 'REDIS_URL="redis://***@host"', 'pa ss@w'],
      [{ SHORT_BASE_URL: 'https://user:pa/ss@s.example?x' }, 'SHORT_BASE_URL="https://***@s.example?x"', 'pa/ss'],
      [{ CORS_ORIGINS: 'https://user:pw@a.example/x' }, 'CORS_ORIGINS="https://***@a.example/x"', 'user:pw'],
    ]
    for (const [env, shown, secret] of cases) {
      expect(message(env)).toStartWith(`invalid setting ${shown}`)
      expect(message(env)).not.toContain(secret)
    }
  })

  it('takes nats://, tls:// or host:port servers in NATS_URL, and refuses another scheme naming NATS_URL', () => {
    for (const accepted of ['nats://a:4222', 'tls://a:4222', 'a:4222', 'nats://a:4222,tls://b:4222, c:4222'])
      expect(loadConfig({ NATS_URL: accepted }).NATS_URL).toBe(accepted)
    for (const refused of ['http://127.0.0.1:4222', 'nats://a:4222,ws://b:4222', 'tcp://a:4222'])
      expect(() => loadConfig({ NATS_URL: refused })).toThrow(`invalid setting NATS_URL=${JSON.stringify(refused)}: `)
    expect(() => loadConfig({ NATS_URL: 'http://127.0.0.1:4222' })).toThrow('"http://127.0.0.1:4222" is not a NATS server (nats://host:port, tls://host:port or host:port, several separated by commas)')
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
