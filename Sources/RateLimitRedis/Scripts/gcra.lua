-- gcra.lua: GCRA, the generic cell rate algorithm (Spec/GCRA.md, GCRA-1 ... GCRA-12), on one
-- Redis hash. Sent after prelude.lua, which gives the integers, the replies and the driver.
--
-- State (GCRA-2): the hash's fields `tat` and `last`, decimal. The configuration (burst B,
-- emission interval T) comes with every call in ARGV; the key holds the state only.
-- Exactness: tat <= Int64.max + tau < 2^64 and every product (n * T, A * T') is formed on limbs
-- (prelude.lua), so no value is ever a rounded double.

local S = { fields = { 'burst', 'emissionIntervalNanoseconds' } }

-- GCRA-1: burst, then emissionIntervalNanoseconds at least 1; the interval at most
-- floor(Int64.max / B), so that tau = B * T fits.
function S.config(v)
    local got, bad = positives(v, { 'burst', 'emissionIntervalNanoseconds' })
    if not got then return nil, bad end
    local b, t = got[1], got[2]
    -- T <= floor(Int64.max / B) iff B * T <= Int64.max: the division only for a refusal.
    local tau = mul(b, t)
    if cmp(tau, INT64_MAX) > 0 then
        return nil, refusal('emissionIntervalNanoseconds', 'exceedsMaximum', div(INT64_MAX, b))
    end
    return { b = b, t = t, tau = tau }
end

function S.maximum(c) return c.b end -- GCRA-7: more than the burst is neverAllowed

function S.load(key)
    local v = redis.call('HMGET', key, 'tat', 'last')
    if not v[1] then return nil end
    return { tat = select(2, decimal(v[1])), last = select(2, decimal(v[2])) }
end

function S.store(key, _, st)
    redis.call('HSET', key, 'tat', str(st.tat), 'last', str(st.last))
end

function S.initial(_, t) return { tat = t, last = t } end -- GCRA-2, GCRA-9: (t0, t0)
function S.last(st) return st.last end

-- GCRA-5: floor((tau - max(tat - e, 0)) / T); the pending work never exceeds tau (GCRA-11).
-- With tau below 10^14 (and so T, and the pending work, which is at most tau), on Lua numbers.
function S.remaining(c, st, e)
    local pending = monus(st.tat, e)
    local p, tau = small(pending), small(c.tau)
    if p and tau then
        if p >= tau then return ZERO end
        return nat(divideSmall(tau - p, small(c.t)))
    end
    return div(monus(c.tau, pending), c.t)
end

-- GCRA-4: s = max(tat, e), cost n * T, admitted iff (s - e) + cost <= tau; then tat := s + cost,
-- last := e. GCRA-6: otherwise the admission instant is tat - (tau - cost). With s - e, the cost
-- and tau below 10^14 (the common case), the test and the remainder on Lua numbers (sums below
-- 2^53: exact).
function S.acquire(c, st, e, n, now)
    local s = maxN(st.tat, e)
    local cost = mul(n, c.t)
    local ahead = sub(s, e)
    local a, k, tau = small(ahead), small(cost), small(c.tau)
    if a and k and tau then
        if a + k > tau then return refuseAt(sub(st.tat, sub(c.tau, cost)), now) end
        local changed = { tat = add(s, cost), last = e }
        return allowed(nat(divideSmall(tau - a - k, small(c.t)))), changed
    end
    if cmp(add(ahead, cost), c.tau) <= 0 then
        local changed = { tat = add(s, cost), last = e }
        return allowed(S.remaining(c, changed, e)), changed
    end
    return refuseAt(sub(st.tat, sub(c.tau, cost)), now)
end

-- GCRA-10: the available units A = tau - max(tat - e, 0) are kept, A' = min(floor(A * T' / T),
-- tau'), and tat := e + (tau' - A'), last := e.
function S.reconfigure(c, st, e, c2)
    local available = monus(c.tau, monus(st.tat, e))
    local kept = minN(div(mul(available, c2.t), c.t), c2.tau)
    return { tat = add(e, sub(c2.tau, kept)), last = e }
end

-- CORE-15: idle once tat <= e (a full burst available).
function S.idle(_, st) return st.tat end

return run(S, KEYS, ARGV)
