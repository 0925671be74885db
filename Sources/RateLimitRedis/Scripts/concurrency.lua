-- concurrency.lua: the concurrency limiter (Spec/ConcurrencyLimiter.md, CL-1 ... CL-12) with
-- leases (Spec/SharedLimits.md, SHARED-6 ... SHARED-10), on one Redis sorted set. Sent after
-- prelude.lua, which gives the integers, the replies and the driver.
--
-- Every admitted acquire is a lease: its permits are held until released or until the lease
-- expires, whichever comes first, so the permits of a client that crashed come back by
-- themselves (SHARED-6). The acquire names the lease's duration D (ARGV after the permits,
-- 1 ... 2^63 ns); 2^63 outlasts every instant of the timeline, which is how the conformance shim
-- runs the plain limiter of CL: no lease of its ever expires.
--
-- State: one sorted set whose scores are all 0, ordered by member (ZRANGEBYLEX), exact strings:
--   "<x>:<t>:<q>=<p>"   a lease of p permits, acquired at t, expiring at x (both padded to 20
--                       digits, so that member order is expiry order), q its sequence number;
--                       the lease's handle, returned to the client, is "<x>:<t>:<q>";
--   "!held:<h>"         the permits of all leases stored (h of CL-2, before expiry);
--   "!last:<L>"         the last instant (CORE-10: lease expiry depends on time);
--   "!seq:<q>"          the last sequence number given, kept by reset, so that a lease taken
--                       before a reset is unknown after it (CL-9, SHARED-8).
-- The configuration (N) comes with every call.

local S = { fields = { 'limit' } }
local LONGEST_LEASE = select(2, decimal('9223372036854775808')) -- 2^63

-- CL-1: limit at least 1; no maximum.
function S.config(v)
    local n, bad = positive(v.limit, 'limit')
    if not n then return nil, bad end
    return { n = n }
end

function S.maximum(c) return c.n end -- CL-7: more than the limit is neverAllowed

function S.load(key)
    local meta = redis.call('ZRANGEBYLEX', key, '-', '(0')
    if #meta == 0 then return nil end
    local st = {}
    for i = 1, #meta do
        local name, value = string.match(meta[i], '^!(%a+):(%d+)$')
        if name == 'held' then st.held = select(2, decimal(value)) end
        if name == 'last' then st.last = select(2, decimal(value)) end
        if name == 'seq' then st.seq = select(2, decimal(value)) end
    end
    return st
end

-- CL-2: nothing held. `clear` tells store to delete what the key held.
function S.initial(_, t) return { held = ZERO, last = t, seq = ZERO, empty = true, clear = true } end
function S.last(st) return st.last end
function S.afterReset(st, fresh) -- CL-9, SHARED-8: leases are forgotten, their numbers are not
    fresh.seq = st.seq
    return fresh
end

local function lease(member)
    local x, t, q, p = string.match(member, '^(%d+):(%d+):(%d+)=(%d+)$')
    return { member = member, handle = x .. ':' .. t .. ':' .. q, expiry = select(2, decimal(x)),
        permits = select(2, decimal(p)) }
end

-- SHARED-6: a lease is in force at e iff e < its expiry. The permits in force at e: the stored
-- h minus the leases that expired at or before e (one range read: members below e + 1).
local function inFlight(st, e)
    if st.empty then return ZERO end
    local expired = redis.call('ZRANGEBYLEX', KEY, '[0', '(' .. padded(add(e, ONE)))
    local gone = ZERO
    for i = 1, #expired do gone = add(gone, lease(expired[i]).permits) end
    return sub(st.held, gone)
end

function S.remaining(c, st, e) return monus(c.n, inFlight(st, e)) end -- CL-5

-- CL-4: admitted iff h + n <= N; the permits are a new lease expiring at e + D (SHARED-6).
-- CL-6: otherwise rejectedUntilRelease(h + n - N).
function S.acquire(c, st, e, n, _, duration)
    local negative, d = decimal(duration)
    if negative == nil then return redis.error_reply('a lease duration (nanoseconds) must follow the permits') end
    if negative or isZero(d) then return invalid('leaseNanoseconds', 'mustBePositive') end
    if cmp(d, LONGEST_LEASE) > 0 then return invalid('leaseNanoseconds', 'exceedsMaximum', LONGEST_LEASE) end
    local h = inFlight(st, e)
    if cmp(add(h, n), c.n) > 0 then return result('rejectedUntilRelease', 'shortfall', str(sub(add(h, n), c.n))) end
    local seq = add(st.seq, ONE)
    local expiry = add(e, d)
    local handle = padded(expiry) .. ':' .. padded(e) .. ':' .. str(seq)
    local changed = { held = add(h, n), last = e, seq = seq, prune = e,
        edits = { { add = handle .. '=' .. str(n) } } }
    local reply = allowed(sub(c.n, changed.held))
    for _, v in ipairs({ 'lease', handle, 'expiresAt', str(expiry) }) do reply[#reply + 1] = v end
    return reply, changed
end

-- The leases in force at e, oldest expiry first, until their permits reach `wanted`.
local function leasesUntil(e, wanted)
    local taken, seen, offset = {}, ZERO, 0
    while cmp(seen, wanted) < 0 do
        local batch = redis.call('ZRANGEBYLEX', KEY, '[' .. padded(add(e, ONE)), '+', 'LIMIT', offset, 64)
        if #batch == 0 then error('concurrency: the leases hold fewer permits than the count says') end
        for i = 1, #batch do
            local l = lease(batch[i])
            taken[#taken + 1] = l
            seen = add(seen, l.permits)
            if cmp(seen, wanted) >= 0 then break end
        end
        offset = offset + #batch
    end
    return taken
end

-- CL-8 and SHARED-7. release(n) with no handle gives back n of the permits in force, taken from
-- the leases that expire first; more than are in force is invalid (maximum: those in force).
-- With a handle, n of that lease's permits; more than it holds in force, and any n >= 1 of a
-- lease that expired or is unknown, is invalid (maximum: what it holds, 0 for those), so no
-- permit ever comes back twice. release(0) changes nothing.
function S.release(c, st, e, n, handle)
    local h = inFlight(st, e)
    local taken
    if handle == '' then
        if cmp(n, h) > 0 then return invalid('permits', 'exceedsMaximum', h) end
        if isZero(n) then return allowed(monus(c.n, h)) end
        taken = leasesUntil(e, n)
    else
        local held = ZERO
        local found
        if string.match(handle, '^%d+:%d+:%d+$') then
            local members = redis.call('ZRANGEBYLEX', KEY, '[' .. handle .. '=', '(' .. handle .. '>')
            if #members > 0 then
                found = lease(members[1])
                if cmp(e, found.expiry) < 0 then held = found.permits end
            end
        end
        if cmp(n, held) > 0 then return invalid('permits', 'exceedsMaximum', held) end
        if isZero(n) then return allowed(monus(c.n, h)) end
        taken = { found }
    end
    local edits, left = {}, n
    for i = 1, #taken do
        local l = taken[i]
        local part = minN(l.permits, left)
        left = sub(left, part)
        local edit = { remove = l.member }
        if cmp(part, l.permits) < 0 then edit.add = l.handle .. '=' .. str(sub(l.permits, part)) end
        edits[#edits + 1] = edit
    end
    local changed = { held = sub(h, n), last = e, seq = st.seq, prune = e, edits = edits }
    return allowed(monus(c.n, changed.held)), changed
end

-- CL-10: the permits in flight (the leases in force at e) are kept.
function S.reconfigure(_, st, e, _)
    return { held = inFlight(st, e), last = e, seq = st.seq, prune = e }
end

-- The metadata first, so that the key never empties (replaceMetadata); then the leases.
function S.store(key, _, st)
    replaceMetadata(key, { '!held:' .. str(st.held), '!last:' .. str(st.last), '!seq:' .. str(st.seq) })
    if st.clear then redis.call('ZREMRANGEBYLEX', key, '[0', '+') end
    if st.prune then redis.call('ZREMRANGEBYLEX', key, '[0', '(' .. padded(add(st.prune, ONE))) end
    for _, edit in ipairs(st.edits or {}) do
        if edit.remove then redis.call('ZREM', key, edit.remove) end
        if edit.add then redis.call('ZADD', key, 0, edit.add) end
    end
end

-- CORE-15: idle once nothing is in flight: at last when nothing is held, otherwise when the
-- last lease to expire does (every lease stored is in force at last).
function S.idle(_, st)
    if isZero(st.held) then return st.last end
    local latest = redis.call('ZREVRANGEBYLEX', KEY, '+', '[0', 'LIMIT', 0, 1)
    return lease(latest[1]).expiry
end

return run(S, KEYS, ARGV)
