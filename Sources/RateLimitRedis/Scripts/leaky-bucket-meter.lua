-- leaky-bucket-meter.lua: the leaky bucket as a meter (Spec/LeakyBucketMeter.md, LBM-1 ...
-- LBM-12), on one Redis hash. Sent after prelude.lua, which gives the integers, the replies and
-- the driver.
--
-- State (LBM-2): the hash's fields `level` (in units: one permit is P units, R units leak per
-- nanosecond) and `last`, decimal. The configuration (C, R, P, initialLevel) comes with every
-- call. Exactness: the level reaches C * P < 2^126 and the leak R * (e - last) as much; both are
-- formed on limbs (prelude.lua).

local S = { fields = { 'capacity', 'leakPermitsPerPeriod', 'periodNanoseconds', 'initialLevel' } }

-- LBM-1: TB-1's refusals, leakPermitsPerPeriod and initialLevel (default 0) in the places of
-- permitsPerPeriod and initialTokens.
function S.config(v)
    local got, bad = positives(v, { 'capacity', 'leakPermitsPerPeriod', 'periodNanoseconds' })
    if not got then return nil, bad end
    local cap, r, p = got[1], got[2], got[3]
    local level
    level, bad = upTo(v.initialLevel, 'initialLevel', ZERO, cap)
    if not level then return nil, bad end
    bad = refillRefusal(p, cap, r, 'periodNanoseconds')
    if bad then return nil, bad end
    return { c = cap, r = r, p = p, initial = level, full = mul(cap, p) }
end

function S.maximum(c) return c.c end -- LBM-7: more than the capacity is neverAllowed

function S.load(key)
    local v = redis.call('HMGET', key, 'level', 'last')
    if not v[1] then return nil end
    return { level = select(2, decimal(v[1])), last = select(2, decimal(v[2])) }
end

function S.store(key, _, st)
    redis.call('HSET', key, 'level', str(st.level), 'last', str(st.last))
end

function S.initial(c, t) return { level = mul(c.initial, c.p), last = t } end -- LBM-2, LBM-9
function S.last(st) return st.last end

-- LBM-3: the level at e, max(0, level - R * (e - last)).
local function leaked(c, st, e)
    return monus(st.level, mul(c.r, sub(e, st.last)))
end

-- LBM-5: whole permits of room, floor((C * P - level) / P).
local function room(c, level) return div(sub(c.full, level), c.p) end

function S.remaining(c, st, e) return room(c, leaked(c, st, e)) end

-- LBM-4: admitted iff level + n * P <= C * P; then level := level + n * P, last := e. LBM-6:
-- otherwise the wait ceil((level + n * P - C * P) / R), the admission instant e + wait (CORE-7).
function S.acquire(c, st, e, n, now)
    local poured = add(leaked(c, st, e), mul(n, c.p))
    if cmp(poured, c.full) <= 0 then return allowed(room(c, poured)), { level = poured, last = e } end
    return refuseAt(add(e, ceilDiv(sub(poured, c.full), c.r)), now)
end

-- LBM-10: the room rho = C * P - level is kept, rho' = min(floor(rho * P' / P), C' * P'), and
-- level := C' * P' - rho'.
function S.reconfigure(c, st, e, c2)
    local rho = sub(c.full, leaked(c, st, e))
    local kept = minN(div(mul(rho, c2.p), c.p), c2.full)
    return { level = sub(c2.full, kept), last = e }
end

-- CORE-15: idle once empty, if new meters start empty: at last + ceil(level / R); a meter that
-- starts above empty is never idle.
function S.idle(c, st)
    if not isZero(c.initial) then return nil end
    return add(st.last, ceilDiv(st.level, c.r))
end

return run(S, KEYS, ARGV)
