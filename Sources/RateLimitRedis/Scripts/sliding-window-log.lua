-- sliding-window-log.lua: the exact sliding window (Spec/SlidingWindowLog.md, SWL-1 ... SWL-12),
-- on one Redis sorted set. Sent after prelude.lua, which gives the integers, the replies and the
-- driver.
--
-- State (SWL-2): the log and `last` in one sorted set whose scores are all 0, so that it is
-- ordered by member, lexicographically (ZRANGEBYLEX). Scores are doubles and would round
-- instants past 2^53; members are exact strings:
--   "<a>:<n>"       an entry: permits n admitted at instant a, a padded to 20 digits, so that
--                   member order is instant order (admissions at one instant share one entry);
--   "!last:<L>"     the last instant; "!sum:<s>", the permits of all entries stored.
-- '!' sorts before every digit, so the two "!" members come first and the entries follow, oldest
-- first. After an admission the set holds at most N entries in force plus the two "!" members:
-- memory is bounded by the limit (SWL-2). The configuration (N, W) comes with every call.
--
-- Cost: the permits in force at e are s minus those of the expired entries, read by one range
-- (ZRANGEBYLEX up to e - W); a refusal walks the entries in force from the oldest, 64 at a time,
-- only as far as SWL-6 needs. Nothing reads the whole log.

local S = { fields = { 'limit', 'windowNanoseconds' } }

-- SWL-1: limit, then windowNanoseconds at least 1; no maximum.
function S.config(v)
    local got, bad = positives(v, { 'limit', 'windowNanoseconds' })
    if not got then return nil, bad end
    local n, w = got[1], got[2]
    return { n = n, w = w }
end

function S.maximum(c) return c.n end -- SWL-7: more than the limit is neverAllowed

local function entry(member)
    local a, n = string.match(member, '^(%d+):(%d+)$')
    return select(2, decimal(a)), select(2, decimal(n))
end

function S.load(key)
    local meta = redis.call('ZRANGEBYLEX', key, '-', '(0')
    if #meta == 0 then return nil end
    local st = {}
    for i = 1, #meta do
        local name, value = string.match(meta[i], '^!(%a+):(%d+)$')
        if name == 'last' then st.last = select(2, decimal(value)) end
        if name == 'sum' then st.sum = select(2, decimal(value)) end
    end
    return st
end

-- A new or reset log: empty, last = t. `clear` tells store to delete what the key held.
function S.initial(_, t) return { last = t, sum = ZERO, empty = true, clear = true } end
function S.last(st) return st.last end

-- SWL-3: an entry (a, n) is in force at e iff a + W > e, that is a >= e - W + 1. The first
-- instant still in force, or nil when every instant >= 0 is.
local function cutoff(e, w)
    local first = add(e, ONE)
    if cmp(first, w) <= 0 then return nil end
    return sub(first, w)
end

-- F, the permits in force at e under the window w: the stored sum minus the expired entries'.
local function inForce(st, e, w)
    if st.empty then return ZERO end
    local first = cutoff(e, w)
    if not first then return st.sum end
    local expired = redis.call('ZRANGEBYLEX', KEY, '[0', '(' .. padded(first))
    local gone = ZERO
    for i = 1, #expired do
        local _, n = entry(expired[i])
        gone = add(gone, n)
    end
    return sub(st.sum, gone)
end

function S.remaining(c, st, e) return monus(c.n, inForce(st, e, c.w)) end -- SWL-5

-- SWL-4: admitted iff F + n <= N; then expired entries are dropped, (e, n) is appended (merged
-- into an entry at e), last := e. SWL-6: otherwise walk the entries in force, oldest first, until
-- their permits reach x = F + n - N; the admission instant is that entry's a + W.
function S.acquire(c, st, e, n, now)
    local f = inForce(st, e, c.w)
    if cmp(add(f, n), c.n) <= 0 then
        local changed = { last = e, sum = add(f, n), prune = cutoff(e, c.w), append = n }
        return allowed(sub(c.n, add(f, n))), changed
    end
    local x = sub(add(f, n), c.n) -- at most F, since n <= N: the walk ends within the log
    local first = cutoff(e, c.w)
    local from = '[' .. (first and padded(first) or '0')
    local seen, offset = ZERO, 0
    while true do
        local batch = redis.call('ZRANGEBYLEX', KEY, from, '+', 'LIMIT', offset, 64)
        if #batch == 0 then error('sliding-window-log: the log holds fewer permits than its sum says') end
        for i = 1, #batch do
            local a, m = entry(batch[i])
            seen = add(seen, m)
            if cmp(seen, x) >= 0 then return refuseAt(add(a, c.w), now) end
        end
        offset = offset + #batch
    end
end

-- SWL-10: entries not in force under the old window are dropped, the others kept; last := e.
function S.reconfigure(c, st, e, _)
    return { last = e, sum = inForce(st, e, c.w), prune = cutoff(e, c.w) }
end

-- The metadata first, so that the key never empties (replaceMetadata); then the entries.
function S.store(key, _, st)
    replaceMetadata(key, { '!last:' .. str(st.last), '!sum:' .. str(st.sum) })
    if st.clear then redis.call('ZREMRANGEBYLEX', key, '[0', '+') end
    if st.prune then redis.call('ZREMRANGEBYLEX', key, '[0', '(' .. padded(st.prune)) end
    if st.append then
        local at = padded(st.last)
        local same = redis.call('ZRANGEBYLEX', key, '[' .. at .. ':', '(' .. at .. ';')
        local n = st.append
        if #same > 0 then
            local _, m = entry(same[1])
            n = add(n, m)
            redis.call('ZREM', key, same[1])
        end
        redis.call('ZADD', key, 0, at .. ':' .. str(n))
    end
end

-- CORE-15: idle once every entry has expired: at the newest entry's a + W, or at last when the
-- log is empty.
function S.idle(c, st)
    local newest = redis.call('ZREVRANGEBYLEX', KEY, '+', '[0', 'LIMIT', 0, 1)
    if #newest == 0 then return st.last end
    local a = entry(newest[1])
    return add(a, c.w)
end

return run(S, KEYS, ARGV)
