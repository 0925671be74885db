-- token-bucket-interval.lua: the token bucket refilled in lumps at interval boundaries
-- (Spec/IntervalTokenBucket.md, TBI-1 ... TBI-12), on one Redis hash. Sent after prelude.lua,
-- which gives the integers, the replies and the driver.
--
-- State (TBI-2): the hash's fields `tokens` k and `last`, decimal. The configuration (C, K, I,
-- initialTokens) comes with every call. Boundaries j * I are aligned to the timeline's origin
-- (TBI-3): on the server's clock, to the Unix epoch. Exactness: b * K (TBI-3) reaches 2^126 and a
-- boundary (floor(e / I) + m) * I 2^64; both are formed on limbs (prelude.lua).

local S = { fields = { 'capacity', 'tokensPerInterval', 'intervalNanoseconds', 'initialTokens' } }

-- TBI-1: capacity, tokensPerInterval, intervalNanoseconds at least 1; initialTokens 0 ... C
-- (default C); then the refill time: I at most floor(Int64.max / ceil(C / K)).
function S.config(v)
    local got, bad = positives(v, { 'capacity', 'tokensPerInterval', 'intervalNanoseconds' })
    if not got then return nil, bad end
    local cap, k, i = got[1], got[2], got[3]
    local initial
    initial, bad = upTo(v.initialTokens, 'initialTokens', cap, cap)
    if not initial then return nil, bad end
    -- I <= floor(Int64.max / ceil(C / K)) iff I * ceil(C / K) <= Int64.max: the division only for
    -- a refusal.
    local lumps = ceilDiv(cap, k)
    if cmp(mul(i, lumps), INT64_MAX) > 0 then
        return nil, refusal('intervalNanoseconds', 'exceedsMaximum', div(INT64_MAX, lumps))
    end
    return { c = cap, k = k, i = i, initial = initial }
end

function S.maximum(c) return c.c end -- TBI-7: more than the capacity is neverAllowed

function S.load(key)
    local v = redis.call('HMGET', key, 'tokens', 'last')
    if not v[1] then return nil end
    return { k = select(2, decimal(v[1])), last = select(2, decimal(v[2])) }
end

function S.store(key, _, st)
    redis.call('HSET', key, 'tokens', str(st.k), 'last', str(st.last))
end

function S.initial(c, t) return { k = c.initial, last = t } end -- TBI-2, TBI-9
function S.last(st) return st.last end

-- TBI-3: K tokens for each boundary in (last, e], b = floor(e / I) - floor(last / I), capped at C.
local function refilled(c, st, e)
    local b = sub(div(e, c.i), div(st.last, c.i))
    return minN(c.c, add(st.k, mul(b, c.k)))
end

function S.remaining(c, st, e) return refilled(c, st, e) end -- TBI-5, TBI-8

-- TBI-4: k >= n takes n tokens. TBI-6: otherwise m = ceil((n - k) / K) boundaries are needed;
-- the admission instant is the m-th boundary after e, (floor(e / I) + m) * I.
function S.acquire(c, st, e, n, now)
    local k = refilled(c, st, e)
    if cmp(k, n) >= 0 then
        local changed = { k = sub(k, n), last = e }
        return allowed(changed.k), changed
    end
    local m = ceilDiv(sub(n, k), c.k)
    return refuseAt(mul(add(div(e, c.i), m), c.i), now)
end

-- TBI-10: refill under the old configuration, then (min(k, C'), e).
function S.reconfigure(c, st, e, c2)
    return { k = minN(refilled(c, st, e), c2.c), last = e }
end

-- CORE-15: idle once full, if new buckets start full (never otherwise): at last when full, else
-- at the m-th boundary after last, m = ceil((C - k) / K).
function S.idle(c, st)
    if cmp(c.initial, c.c) < 0 then return nil end
    if cmp(st.k, c.c) >= 0 then return st.last end
    return mul(add(div(st.last, c.i), ceilDiv(sub(c.c, st.k), c.k)), c.i)
end

return run(S, KEYS, ARGV)
