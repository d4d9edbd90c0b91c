import { defineScript } from '../redis/run-script.js';

/*
 * Time base: every script takes `now` as ARGV[1]. An empty string means "use Redis TIME", so that by default every
 * machine in the fleet reads one clock and clock skew between workers cannot let two of them start a request inside
 * one domain's minimum delay. Tests and simulations pass their injected clock's time instead.
 *
 * Stored instants are compared by value; key expiries (PEXPIRE) are only hygiene so abandoned domains do not pile
 * up, and carry a margin so a manual clock that runs slower than the wall clock never loses state early.
 */
const NOW = `
local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[1])
end
`;

/**
 * KEYS: slots (zset token -> expiry ms), last start (string ms), pause (hash untilMs/reason), raised delay (hash
 * delayMs/untilMs), starts (zset token -> start ms), hold (hash avgMs: smoothed time a slot is held), turn (string ms:
 * the next start not yet promised to a waiter)
 * ARGV: now, maxConcurrency, minDelayMs, slotTtlMs, token, concurrencyRetryMs, hygieneMs, queued ('1' or '')
 * Returns {granted 0|1, reason, retryInMs, nowMs}.
 *
 * When every slot is taken, the retry hint is when the oldest holder is expected to finish (its start plus the
 * domain's average hold time), never later than the earliest slot expiry; an overdue holder, or a domain with no
 * history yet, falls back to the concurrencyRetryMs poll.
 *
 * A queued caller (a job that goes away and comes back at the hint) is given a turn instead: the next start not yet
 * promised to another waiter, then the turn moves on by the domain's spacing (its minimum delay, or its average hold
 * time over its concurrency, whichever is longer). Without it every waiter of a domain got the same hint, so a backlog
 * of N jobs came back together each minimum delay, one went and N-1 were parked again: N job runs per request, and
 * every other domain's jobs queued behind them. Turns are only hints (the checks above still decide), and a domain
 * where no request started for ten spacings (its waiters gone: a cancelled crawl, a restart) starts its turns afresh.
 */
export const acquireScript = defineScript(
  `${NOW}
local pausedUntil = tonumber(redis.call('HGET', KEYS[3], 'untilMs'))
local queued = ARGV[8] == '1'
-- The domain's average hold time: read only by the refusals that use it, not on a grant.
local avgHold
local function holdAvg()
  if avgHold == nil then avgHold = tonumber(redis.call('HGET', KEYS[6], 'avgMs')) or false end
  return avgHold or nil
end
-- A queued waiter's turn: at or after \`earliest\`, behind the turns already promised; the turn then moves on.
local function turnFrom(earliest, spacing, last)
  local turn = tonumber(redis.call('GET', KEYS[7]))
  local idleFor = 10 * spacing + 1000
  if not turn or turn < earliest or not last or now - last > idleFor then turn = earliest end
  local nextTurn = turn + math.max(spacing, 1)
  redis.call('SET', KEYS[7], nextTurn, 'PX', math.ceil(nextTurn - now) + tonumber(ARGV[7]))
  return turn
end
local function spacingOf(minDelay)
  local maxConc = tonumber(ARGV[2])
  local hold = holdAvg()
  local byHold = hold and (hold / maxConc) or (tonumber(ARGV[6]) / maxConc)
  return math.ceil(math.max(minDelay, byHold))
end
if pausedUntil and pausedUntil > now then
  -- No request starts during a pause: that is not a sign its waiters are gone.
  if queued then return {0, 'paused', turnFrom(pausedUntil, spacingOf(tonumber(ARGV[3])), now) - now, now} end
  return {0, 'paused', pausedUntil - now, now}
end
local minDelay = tonumber(ARGV[3])
local raised = redis.call('HMGET', KEYS[4], 'delayMs', 'untilMs')
if raised[1] and tonumber(raised[2]) > now and tonumber(raised[1]) > minDelay then
  minDelay = tonumber(raised[1])
end
local last = tonumber(redis.call('GET', KEYS[2]))
if last and now < last + minDelay then
  if queued then return {0, 'delay', turnFrom(last + minDelay, spacingOf(minDelay), last) - now, now} end
  return {0, 'delay', last + minDelay - now, now}
end
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
if #expired > 0 then
  redis.call('ZREM', KEYS[1], unpack(expired))
  redis.call('ZREM', KEYS[5], unpack(expired))
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  local retry = tonumber(ARGV[6])
  local oldest = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
  local hold = holdAvg()
  if hold and oldest[2] then
    local expected = tonumber(oldest[2]) + hold - now
    if expected > 0 then retry = expected end
  end
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local untilExpiry = tonumber(first[2]) - now
  if untilExpiry < retry then retry = untilExpiry end
  if queued then return {0, 'concurrency', math.ceil(turnFrom(now + retry, spacingOf(minDelay), last) - now), now} end
  return {0, 'concurrency', math.ceil(retry), now}
end
local ttl = tonumber(ARGV[4])
local hygiene = tonumber(ARGV[7])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[5])
redis.call('PEXPIRE', KEYS[1], ttl + hygiene)
redis.call('ZADD', KEYS[5], now, ARGV[5])
redis.call('PEXPIRE', KEYS[5], ttl + hygiene)
redis.call('SET', KEYS[2], now, 'PX', minDelay + hygiene)
return {1, 'granted', 0, now}
`,
  7,
);

/**
 * KEYS: slots, starts, hold. ARGV: now, token, hygieneMs, holdMemoryMs. Frees the slot and folds its hold time into the
 * domain's average (weight 0.2: recent fetches matter most, one slow page does not swing it). The average outlives the
 * domain's last request by holdMemoryMs only: it paces a domain's queued waiters, and a fleet crawling millions of
 * domains kept one hash for each it had fetched in the last day.
 */
export const releaseScript = defineScript(
  `${NOW}
local started = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[2]))
redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[2])
if started and now >= started then
  local held = now - started
  local avg = tonumber(redis.call('HGET', KEYS[3], 'avgMs'))
  if avg then held = avg * 0.8 + held * 0.2 end
  redis.call('HSET', KEYS[3], 'avgMs', math.floor(held))
  redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[4]) + tonumber(ARGV[3]))
end
return 1
`,
  3,
);

/** KEYS: slots. ARGV: now, token, slotTtlMs, hygieneMs. Pushes a live holder's expiry forward; 0 when the slot already expired. */
export const refreshScript = defineScript(
  `${NOW}
local ttl = tonumber(ARGV[3])
local updated = redis.call('ZADD', KEYS[1], 'XX', 'CH', now + ttl, ARGV[2])
if updated == 1 then redis.call('PEXPIRE', KEYS[1], ttl + tonumber(ARGV[4])) end
return updated
`,
  1,
);

/**
 * KEYS: pause. ARGV: now, untilMs (or a duration when ARGV[5] is 'for'), reason, hygieneMs, mode.
 * Extend-only. Returns the pause's end after the call (0 when there is none).
 */
export const pauseScript = defineScript(
  `${NOW}
local untilMs = tonumber(ARGV[2])
if ARGV[5] == 'for' then untilMs = now + untilMs end
local current = tonumber(redis.call('HGET', KEYS[1], 'untilMs'))
if untilMs <= now or (current and current >= untilMs) then
  if current and current > now then return current end
  return 0
end
redis.call('HSET', KEYS[1], 'untilMs', untilMs, 'reason', ARGV[3])
redis.call('PEXPIRE', KEYS[1], untilMs - now + tonumber(ARGV[4]))
return untilMs
`,
  1,
);

/** KEYS: pause. ARGV: now. Returns {untilMs, reason} while paused, else an empty array. */
export const pausedUntilScript = defineScript(
  `${NOW}
local p = redis.call('HMGET', KEYS[1], 'untilMs', 'reason')
if p[1] and tonumber(p[1]) > now then return {tonumber(p[1]), p[2] or ''} end
return {}
`,
  1,
);

/** KEYS: raised delay. ARGV: now, delayMs, ttlMs, hygieneMs. The latest robots.txt wins, so it replaces rather than maxes. */
export const raiseDelayScript = defineScript(
  `${NOW}
local ttl = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'delayMs', ARGV[2], 'untilMs', now + ttl)
redis.call('PEXPIRE', KEYS[1], ttl + tonumber(ARGV[4]))
return 1
`,
  1,
);
