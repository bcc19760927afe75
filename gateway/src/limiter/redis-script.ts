/**
 * One request, both limits, atomically: the Lua twin of `step` in gcra.ts (same names, same order).
 * KEYS[1]: the key's hash { t = TAT µs, d = UTC day number, n = requests admitted that day }.
 * ARGV: daily, interval µs, burst, now µs ('' = Redis server time, so every gateway shares one clock).
 * Returns { code (0 allowed, 1 rate, 2 daily), tat µs, count, now µs }; big numbers as strings
 * because Lua prints numbers with 14 significant digits.
 * The hash expires once it no longer matters: after the next 00:00 UTC and after the bucket is full.
 */
export const LIMIT_SCRIPT = `
local daily = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local now
if ARGV[4] ~= '' then
  now = tonumber(ARGV[4])
else
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end
local today = math.floor(now / 86400000000)
local stored = redis.call('HMGET', KEYS[1], 't', 'd', 'n')
local tat = math.max(tonumber(stored[1]) or now, now)
local count = 0
if tonumber(stored[2]) == today then count = tonumber(stored[3]) or 0 end
local function reply(code, t, n)
  return { code, string.format('%.0f', t), n, string.format('%.0f', now) }
end
if count >= daily then return reply(2, tat, count) end
local newTat = tat + interval
if newTat - burst * interval > now then return reply(1, tat, count) end
redis.call('HSET', KEYS[1], 't', string.format('%.0f', newTat), 'd', today, 'n', count + 1)
local ttlUs = math.max((today + 1) * 86400000000 - now, newTat - now)
redis.call('PEXPIRE', KEYS[1], math.ceil(ttlUs / 1000) + 1000)
return reply(0, newTat, count + 1)
`
