-- token-bucket.lua: the token bucket with continuous refill (Spec/TokenBucket.md, TB-1 ... TB-12),
-- on one Redis hash. Sent after prelude.lua, which gives the integers, the replies and the driver.
--
-- State (TB-2): the hash's fields `tokens` k, `fraction` f (units: one token is P units, each
-- nanosecond adds R) and `last`, decimal. The configuration (C, R, P, I) comes with every call.
-- Exactness: the refill R * (e - last) + f and the missing units (n - k) * P - f reach 2^126;
-- they are formed and divided on limbs (prelude.lua), never as doubles.

local S = { fields = { 'capacity', 'permitsPerPeriod', 'periodNanoseconds', 'initialTokens' } }

-- TB-1: capacity, permitsPerPeriod, periodNanoseconds at least 1; initialTokens 0 ... C (default
-- C); then the refill time: P at most floor(Int64.max * R / C).
function S.config(v)
    local got, bad = positives(v, { 'capacity', 'permitsPerPeriod', 'periodNanoseconds' })
    if not got then return nil, bad end
    local cap, r, p = got[1], got[2], got[3]
    local i
    i, bad = upTo(v.initialTokens, 'initialTokens', cap, cap)
    if not i then return nil, bad end
    bad = refillRefusal(p, cap, r, 'periodNanoseconds')
    if bad then return nil, bad end
    return { c = cap, r = r, p = p, i = i }
end

function S.maximum(c) return c.c end -- TB-7: more than the capacity is neverAllowed

function S.load(key)
    local v = redis.call('HMGET', key, 'tokens', 'fraction', 'last')
    if not v[1] then return nil end
    return { k = select(2, decimal(v[1])), f = select(2, decimal(v[2])), last = select(2, decimal(v[3])) }
end

function S.store(key, _, st)
    redis.call('HSET', key, 'tokens', str(st.k), 'fraction', str(st.f), 'last', str(st.last))
end

function S.initial(c, t) return { k = c.i, f = ZERO, last = t } end -- TB-2, TB-9: (I, 0, t0)
function S.last(st) return st.last end

-- TB-3: the state refilled to e (not stored unless the event changes the state).
local function refilled(c, st, e)
    if cmp(e, st.last) == 0 or cmp(st.k, c.c) == 0 then return { k = st.k, f = st.f, last = e } end
    local u = add(mul(c.r, sub(e, st.last)), st.f)
    if cmp(u, c.p) < 0 then return { k = st.k, f = u, last = e } end
    local q, rest = divmod(u, c.p)
    if cmp(q, sub(c.c, st.k)) >= 0 then return { k = c.c, f = ZERO, last = e } end
    return { k = add(st.k, q), f = rest, last = e }
end

function S.remaining(c, st, e) return refilled(c, st, e).k end -- TB-5, TB-8

-- TB-4: k >= n takes n tokens. TB-6: otherwise the missing units m = (n - k) * P - f, the wait
-- ceil(m / R), the admission instant e + wait (CORE-7).
function S.acquire(c, st, e, n, now)
    local s = refilled(c, st, e)
    if cmp(s.k, n) >= 0 then
        s.k = sub(s.k, n)
        return allowed(s.k), s
    end
    local missing = sub(mul(sub(n, s.k), c.p), s.f)
    return refuseAt(add(e, ceilDiv(missing, c.r)), now)
end

-- TB-10: refill under the old configuration, then keep the tokens: (C', 0, e) when k >= C',
-- otherwise (k, floor(f * P' / P), e).
function S.reconfigure(c, st, e, c2)
    local s = refilled(c, st, e)
    if cmp(s.k, c2.c) >= 0 then return { k = c2.c, f = ZERO, last = e } end
    return { k = s.k, f = div(mul(s.f, c2.p), c.p), last = e }
end

-- CORE-15: idle once full, if new buckets start full; a bucket that starts below capacity is
-- never idle. Full at last + ceil((C * P - (k * P + f)) / R): that many nanoseconds add the
-- missing units, one nanosecond fewer does not.
function S.idle(c, st)
    if cmp(c.i, c.c) < 0 then return nil end
    local missing = sub(mul(c.c, c.p), add(mul(st.k, c.p), st.f))
    return add(st.last, ceilDiv(missing, c.r))
end

return run(S, KEYS, ARGV)
