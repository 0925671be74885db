-- fixed-window.lua: the fixed window counter (Spec/FixedWindow.md, FW-1 ... FW-12), on one Redis
-- hash. Sent after prelude.lua, which gives the integers, the replies and the driver.
--
-- State (FW-2): the hash's fields `used` u and `last`, decimal. The configuration (N, W) comes
-- with every call. Windows are aligned to the timeline's origin (FW-3): on the server's clock,
-- to the Unix epoch. Exactness: window indices floor(t / W) and starts (j + 1) * W (up to 2^64)
-- are formed on limbs (prelude.lua).

local S = { fields = { 'limit', 'windowNanoseconds' } }

-- FW-1: limit, then windowNanoseconds at least 1; no maximum.
function S.config(v)
    local got, bad = positives(v, { 'limit', 'windowNanoseconds' })
    if not got then return nil, bad end
    local n, w = got[1], got[2]
    return { n = n, w = w }
end

function S.maximum(c) return c.n end -- FW-7: more than the limit is neverAllowed

function S.load(key)
    local v = redis.call('HMGET', key, 'used', 'last')
    if not v[1] then return nil end
    return { u = select(2, decimal(v[1])), last = select(2, decimal(v[2])) }
end

function S.store(key, _, st)
    redis.call('HSET', key, 'used', str(st.u), 'last', str(st.last))
end

function S.initial(_, t) return { u = ZERO, last = t } end -- FW-2, FW-9: (0, t0)
function S.last(st) return st.last end

-- FW-3: the count at e starts over when e is in a later window than last.
local function counted(c, st, e)
    if cmp(div(e, c.w), div(st.last, c.w)) > 0 then return ZERO end
    return st.u
end

function S.remaining(c, st, e) return monus(c.n, counted(c, st, e)) end -- FW-5

-- FW-4: admitted iff n <= N - u; then u := u + n, last := e. FW-6: otherwise the next window's
-- start (floor(e / W) + 1) * W.
function S.acquire(c, st, e, n, now)
    local u = counted(c, st, e)
    if cmp(add(u, n), c.n) <= 0 then
        local changed = { u = add(u, n), last = e }
        return allowed(monus(c.n, changed.u)), changed
    end
    return refuseAt(mul(add(div(e, c.w), ONE), c.w), now)
end

-- FW-10: u as counted under the old window is kept, attributed to the new window of e.
function S.reconfigure(c, st, e, _)
    return { u = counted(c, st, e), last = e }
end

-- CORE-15: idle once nothing is counted in the window of e: at last when u = 0, otherwise at the
-- start of the window after last's.
function S.idle(c, st)
    if isZero(st.u) then return st.last end
    return mul(add(div(st.last, c.w), ONE), c.w)
end

return run(S, KEYS, ARGV)
