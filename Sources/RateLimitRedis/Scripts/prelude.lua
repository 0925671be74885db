#!lua
-- prelude.lua: what every rate limiter script shares (Spec/SharedLimits.md). A script sent to
-- Redis is this file followed by one strategy file (gcra.lua, token-bucket.lua, ...), which ends
-- with `return run(S, KEYS, ARGV)`; the same files, wrapped, are also one Redis Functions library
-- (functions.lua, written by `make redis-scripts`); see README.md.
--
-- Exact integers. Redis runs Lua 5.1, whose only number is an IEEE double: exact for integers up
-- to 2^53, while the Spec's instants, configurations and 128-bit products (CORE-2) reach 2^127.
-- So every integer of the Spec is held here as a natural number in base 10^7: a table of limbs,
-- least significant first, each an integer 0 <= limb < 10^7, with no leading zero limb (zero is
-- {0}). Every operation below works limb by limb, on doubles that hold integers below 2^53 (its
-- comments bound each), so none of them rounds. The one double that may round is the estimate
-- of a quotient digit in a division, which only chooses a digit that exact comparisons then
-- correct, so its rounding cannot reach a result. Base 10^7 also makes decimal input and output
-- a matter of slicing strings: the arguments, the stored state and the reply are all decimal
-- strings, never Lua numbers.
--
-- Signs stay out of the arithmetic: only `decimal` sees a minus sign (negative permits are bad
-- input, CORE-9); every difference is taken larger minus smaller, after a comparison.

local BASE = 10000000 -- 10^7
local DIGITS = 7

-- The library functions used on every call, as locals: a global is a table lookup each time.
local floor, byte, find, format, slice = math.floor, string.byte, string.find, string.format, string.sub

-- q, r with t = q * BASE + r, 0 <= r < BASE, for an integer 0 <= t < 2^52 (callers stay below
-- 10^14 + 2 * 10^7). The double quotient t / BASE may round up to the next integer when t is
-- large; the two checks undo that.
local function splitLimb(t)
    local q = floor(t / BASE)
    local r = t - q * BASE -- q * BASE <= t + BASE < 2^53: exact
    if r < 0 then
        q, r = q - 1, r + BASE
    elseif r >= BASE then
        q, r = q + 1, r - BASE
    end
    return q, r
end

local function trim(a)
    local n = #a
    while n > 1 and a[n] == 0 do
        a[n] = nil
        n = n - 1
    end
    return a
end

-- The natural number of a Lua integer 0 <= x < 2^53.
local function nat(x)
    if x < BASE then return { x } end
    local a, n = {}, 0
    repeat
        local q, r = splitLimb(x)
        n = n + 1
        a[n] = r
        x = q
    until x == 0
    return a
end

local ZERO, ONE = nat(0), nat(1)

local function isZero(a) return #a == 1 and a[1] == 0 end

-- A decimal string: returns `negative, natural`, or nil when it is not an integer. At most 40
-- digits (the Spec's values have at most 20). Up to 15 digits (below 10^15 < 2^53) the string is
-- one exact Lua number, split into limbs; longer ones are cut into 7-digit pieces.
local function decimal(s)
    if type(s) ~= 'string' then return nil end
    local negative = false
    if byte(s, 1) == 45 then -- '-'
        negative = true
        s = slice(s, 2)
    end
    if #s > 40 or not find(s, '^%d+$') then return nil end
    local a
    if #s <= 15 then
        a = nat(tonumber(s))
    elseif #s <= 21 then
        -- An instant: 14 digits below 10^14 < 2^52 (two limbs), and the rest, at most 7 digits.
        local n = #s
        local q, r = splitLimb(tonumber(slice(s, n - 13)))
        a = trim({ r, q, tonumber(slice(s, 1, n - 14)) })
    else
        local i, n = #s, 0
        a = {}
        while i >= 1 do
            local j = i - DIGITS + 1
            if j < 1 then j = 1 end
            n = n + 1
            a[n] = tonumber(slice(s, j, i)) -- < 10^7
            i = j - 1
        end
        a = trim(a)
    end
    return negative and not isZero(a), a -- "-0" is 0
end

-- Decimal digits, no leading zero. Limbs are below 10^7 < 2^31.
local function str(a)
    local n = #a
    if n == 1 then return format('%d', a[1]) end
    if n == 2 then return format('%d%07d', a[2], a[1]) end
    if n == 3 then return format('%d%07d%07d', a[3], a[2], a[1]) end
    local parts = { format('%d', a[n]) }
    for i = n - 1, 1, -1 do parts[#parts + 1] = format('%07d', a[i]) end
    return table.concat(parts)
end

-- Decimal digits padded to 20 (enough for every value below 2^64 + 2^63): lexicographic order
-- of padded strings is numeric order, which sorted sets ordered by member use (ZRANGEBYLEX).
local function padded(a)
    local s = str(a)
    return string.rep('0', 20 - #s) .. s
end

-- Gives the sorted set at `key` the metadata `members` ('!name:value', which sort before every
-- entry), the new ones added before the old ones go: the key never empties within a call. A Redis
-- Cluster node whose slot is being moved refuses a script's command on a key the script emptied
-- ("non local key"), and nothing the script did before is undone (SHARED-9).
local function replaceMetadata(key, members)
    local old = redis.call('ZRANGEBYLEX', key, '-', '(0')
    local add, keep = {}, {}
    for _, member in ipairs(members) do
        add[#add + 1] = 0
        add[#add + 1] = member
        keep[member] = true
    end
    redis.call('ZADD', key, unpack(add))
    for i = 1, #old do
        if not keep[old[i]] then redis.call('ZREM', key, old[i]) end
    end
end

local function cmp(a, b)
    if #a ~= #b then return #a < #b and -1 or 1 end
    for i = #a, 1, -1 do
        if a[i] ~= b[i] then return a[i] < b[i] and -1 or 1 end
    end
    return 0
end

local function maxN(a, b) return cmp(a, b) >= 0 and a or b end
local function minN(a, b) return cmp(a, b) <= 0 and a or b end

local function add(a, b)
    local r, carry = {}, 0
    local n = #a > #b and #a or #b
    for i = 1, n do
        local t = (a[i] or 0) + (b[i] or 0) + carry -- < 2 * 10^7 + 1
        if t >= BASE then
            r[i], carry = t - BASE, 1
        else
            r[i], carry = t, 0
        end
    end
    if carry > 0 then r[#r + 1] = carry end
    return r
end

-- a - b for a >= b (callers compare first).
local function sub(a, b)
    local r, borrow = {}, 0
    for i = 1, #a do
        local t = a[i] - (b[i] or 0) - borrow -- > -10^7 - 1
        if t < 0 then
            r[i], borrow = t + BASE, 1
        else
            r[i], borrow = t, 0
        end
    end
    if borrow ~= 0 then error('prelude: sub of a larger number (a caller broke its comparison)') end
    return trim(r)
end

-- max(a - b, 0)
local function monus(a, b)
    if cmp(a, b) <= 0 then return ZERO end
    return sub(a, b)
end

local TWO52 = 4503599627370496 -- 2^52, the bound splitLimb (in nat) takes

local function mul(a, b)
    -- Both below 10^14 with a product below 2^52: one exact multiplication. (A product of 2^52 or
    -- more rounds to 2^52 or more, so the test cannot pass a rounded product.)
    if #a <= 2 and #b <= 2 then
        local p = (a[1] + (a[2] or 0) * BASE) * (b[1] + (b[2] or 0) * BASE)
        if p < TWO52 then return nat(p) end
    end
    local r = {}
    for i = 1, #a + #b do r[i] = 0 end
    for i = 1, #a do
        local carry, ai = 0, a[i]
        if ai ~= 0 then
            for j = 1, #b do
                -- r < 10^7, ai * b[j] <= (10^7 - 1)^2, carry < 10^7 + 1: t < 10^14 + 2 * 10^7 < 2^53
                local t = r[i + j - 1] + ai * b[j] + carry
                carry, r[i + j - 1] = splitLimb(t)
            end
            local k = i + #b
            while carry > 0 do
                local t = r[k] + carry -- < 2 * 10^7 + 1
                carry, r[k] = splitLimb(t)
                k = k + 1
            end
        end
    end
    return trim(r)
end

-- A double near a (an estimate only: never part of a result).
local function approximate(a)
    local v = 0
    for i = #a, 1, -1 do v = v * BASE + a[i] end
    return v
end

-- Shifts a up by one limb and adds the limb d: a * 10^7 + d.
local function shiftIn(a, d)
    local r = { d }
    if isZero(a) then return r end
    for i = 1, #a do r[i + 1] = a[i] end
    return r
end

-- A natural number below 10^14 (at most two limbs) as a Lua number, exact; nil when larger.
local function small(a)
    if #a == 1 then return a[1] end
    if #a == 2 then return a[1] + a[2] * BASE end
    return nil
end

-- The quotient digit d = floor(t / b) and t - d * b for Lua integers t, b with t + b < 2^53: the
-- double quotient may round up to the next integer (or down below it), and the exact products
-- correct that.
local function divideSmall(t, b)
    local d = floor(t / b)
    local r = t - d * b -- d * b <= t + b < 2^53: exact
    while r < 0 do
        d, r = d - 1, r + b
    end
    while r >= b do
        d, r = d + 1, r - b
    end
    return d, r
end

-- One digit of a long division: for r < b * 10^7 (so the digit is below 10^7), d = floor(r / b)
-- and r - d * b. The digit is estimated from doubles (relative error a few 2^-53, so the
-- estimate is off by at most one) and then corrected until 0 <= r - d * b < b holds exactly.
local function longDigit(r, b, bApprox)
    local digit = floor(approximate(r) / bApprox)
    if digit > BASE - 1 then digit = BASE - 1 end
    if digit < 0 then digit = 0 end
    local t = mul(b, nat(digit))
    while cmp(t, r) > 0 do
        digit = digit - 1
        t = sub(t, b)
    end
    r = sub(r, t)
    while cmp(r, b) >= 0 do
        digit = digit + 1
        r = sub(r, b)
    end
    return digit, r
end

-- Divisors below this take the short division: r * 10^7 + limb < 9 * 10^15 and d * b < 2^53.
local SHORT_DIVISOR = 900000000 -- 9 * 10^8

-- floor(a / b) and a mod b, for b > 0, exact whichever way it goes:
-- - both below 10^14 (the common case for spans, bursts and rates): one division of Lua numbers;
-- - a divisor below 9 * 10^8 (a burst, a rate, a millisecond): short division, one limb of a at a
--   time, each step's t = r * 10^7 + limb < 9 * 10^15 since the remainder r < b;
-- - otherwise schoolbook long division, one base-10^7 digit at a time: before each digit the
--   remainder r is below b, so r * 10^7 + limb < b * 10^7 and the digit is at most 10^7 - 1
--   (longDigit); a remainder still below b gives the digit 0 without a multiplication.
local function divmod(a, b)
    if isZero(b) then error('prelude: division by zero') end
    if cmp(a, b) < 0 then return ZERO, a end
    local an, bn = small(a), small(b)
    if an and bn then
        local q, r = divideSmall(an, bn)
        return nat(q), nat(r)
    end
    if bn and bn < SHORT_DIVISOR then
        local q, r = {}, 0
        for i = #a, 1, -1 do
            q[i], r = divideSmall(r * BASE + a[i], bn)
        end
        return trim(q), nat(r)
    end
    local q, r = {}, ZERO
    local bApprox = approximate(b)
    for i = #a, 1, -1 do
        r = shiftIn(r, a[i])
        if cmp(r, b) < 0 then
            q[i] = 0
        else
            q[i], r = longDigit(r, b, bApprox)
        end
    end
    return trim(q), r
end

local function div(a, b)
    local q = divmod(a, b)
    return q
end

-- ceil(a / b) for b > 0.
local function ceilDiv(a, b)
    local q, r = divmod(a, b)
    if isZero(r) then return q end
    return add(q, ONE)
end

local INT64_MAX = select(2, decimal('9223372036854775807'))
local MILLION = nat(1000000)

-- ceil(a / 10^6) in decimal, from a's decimal digits `s`: the instant a, in nanoseconds, as the
-- millisecond PEXPIREAT takes, rounded up. Below 10^21 (every instant and idle instant here is
-- below 2^65 < 10^20) the milliseconds are below 10^15 < 2^53, one exact Lua number.
local function millisecondsUp(s)
    local n = #s
    if n > 21 then return str(ceilDiv(select(2, decimal(s)), MILLION)) end
    if n <= 6 then return s == '0' and '0' or '1' end
    local ms = tonumber(slice(s, 1, n - 6))
    if slice(s, n - 5) ~= '000000' then ms = ms + 1 end
    return format('%.0f', ms)
end

---------------------------------------------------------------------------------------------------
-- Replies: a flat array of names and values, like HGETALL ("kind", "allowed", "remaining", "3",
-- ...). Every value is a decimal string.

local function result(kind, ...)
    local r = { 'kind', kind }
    local extra = { ... }
    for i = 1, #extra do r[#r + 1] = extra[i] end
    return r
end

local function allowed(remaining) return { 'kind', 'allowed', 'remaining', str(remaining) } end
local function neverAllowed() return result('neverAllowed') end

local function invalid(field, problem, maximum)
    if maximum then return result('invalid', 'field', field, 'problem', problem, 'maximum', str(maximum)) end
    return result('invalid', 'field', field, 'problem', problem)
end

-- CORE-7: a refused acquire whose admission instant is a: rejected(a - now) on the timeline,
-- neverAllowed past its end (Int64.max).
local function refuseAt(a, now)
    if cmp(a, INT64_MAX) > 0 then return neverAllowed() end
    return result('rejected', 'retryAfterNanoseconds', str(sub(a, now)))
end

---------------------------------------------------------------------------------------------------
-- Configurations (CORE-3): each strategy lists its fields in its Spec table's order; the
-- arguments carry them as decimal strings ("" for an optional field left out). A check that fails
-- returns the refusal {field, problem, maximum}; the first one wins.

local Refusal = {}
Refusal.__index = Refusal
local function refusal(field, problem, maximum)
    return setmetatable({ field = field, problem = problem, maximum = maximum }, Refusal)
end

-- A field's value: `negative, natural`; a missing field is reported as not positive, as the
-- Python example does (the protocol sends every required field). Values above Int64.max cannot
-- come from the protocol; they are refused as above the largest integer.
local function fieldValue(text, name)
    if text == nil or text == '' then return nil, refusal(name, 'mustBePositive') end
    local negative, value = decimal(text)
    if negative == nil then error('configuration field ' .. name .. ' is not an integer: ' .. tostring(text)) end
    if not negative and #text > 18 and cmp(value, INT64_MAX) > 0 then
        return nil, refusal(name, 'exceedsMaximum', INT64_MAX)
    end
    return negative and not isZero(value), value
end

-- A field at least 1.
local function positive(text, name)
    local negative, value = fieldValue(text, name)
    if negative == nil then return nil, value end
    if negative or isZero(value) then return nil, refusal(name, 'mustBePositive') end
    return value
end

-- An optional field at least 0, `default` when left out.
local function nonNegative(text, name, default)
    if text == nil or text == '' then return default end
    local negative, value = fieldValue(text, name)
    if negative == nil then return nil, value end
    if negative then return nil, refusal(name, 'mustNotBeNegative') end
    return value
end

-- The fields `names` of `v`, each at least 1: their values in order, or nil and the first refusal.
local function positives(v, names)
    local values = {}
    for n, name in ipairs(names) do
        local value, bad = positive(v[name], name)
        if not value then return nil, bad end
        values[n] = value
    end
    return values
end

-- An optional field 0 ... `maximum`, `default` when left out.
local function upTo(text, name, default, maximum)
    local value, bad = nonNegative(text, name, default)
    if not value then return nil, bad end
    if cmp(value, maximum) > 0 then return nil, refusal(name, 'exceedsMaximum', maximum) end
    return value
end

-- The refusal of a period P (field `name`) over which R permits fill a capacity C more slowly
-- than Int64.max nanoseconds allow, `nil` when it fits: P <= floor(Int64.max * R / C) iff
-- P * C <= Int64.max * R, the division only for a refusal (TB-1, LBM-1).
local function refillRefusal(p, c, r, name)
    -- P * C below 2^52 (one exact product of Lua numbers) is below Int64.max <= Int64.max * R.
    local ps, cs = small(p), small(c)
    if ps and cs and ps * cs < TWO52 then return nil end
    local limit = mul(INT64_MAX, r)
    if cmp(mul(p, c), limit) > 0 then return refusal(name, 'exceedsMaximum', div(limit, c)) end
    return nil
end

---------------------------------------------------------------------------------------------------
-- Time (SHARED-2). The second argument empty: the server's clock, TIME, in nanoseconds since the
-- Unix epoch (every client of this server reads the same clock). Otherwise the caller's instant, a
-- decimal integer in 0 ... Int64.max (CORE-1). Either way the same code below decides.

local function readNow(text)
    if text == '' then
        -- seconds, microseconds: s * 10^9 + u * 10^3 = (100 s + floor(u / 10^4)) * 10^7
        -- + (u mod 10^4) * 10^3, the first factor below 2^53 for any s of the next 10^5 years.
        local t = redis.call('TIME')
        local seconds, micros = tonumber(t[1]), tonumber(t[2])
        local high = floor(micros / 10000)
        local q, r = splitLimb(seconds * 100 + high) -- q < 10^7 while s < 10^12, past Int64's 2262
        return trim({ (micros - high * 10000) * 1000, r, q }), 'server'
    end
    local negative, value = decimal(text)
    if negative == nil then return nil end
    if negative and not isZero(value) then return nil, 'negative' end
    if cmp(value, INT64_MAX) > 0 then return nil end
    return value, 'caller'
end

---------------------------------------------------------------------------------------------------
-- The driver: one event of CORE-4 on the limiter stored at keys[1], in the order CORE-9 checks.
--
-- A strategy S gives:
--   S.fields                    its configuration's field names, in the Spec table's order
--   S.config(values)            the configuration, or nil and the refusal (CORE-3)
--   S.maximum(c)                the most permits one acquire may ask for (CORE-7)
--   S.load(key, c)              the stored state, or nil when the key does not exist
--   S.initial(c, t)             the state of a limiter created or reset at t
--   S.last(state)               the state's last instant (CORE-10)
--   S.remaining(c, st, e)       CORE-6 at the evaluation instant e
--   S.acquire(c, st, e, n, now, extra)  for 1 <= n <= maximum: the reply and the new state (nil:
--                               refused, CORE-8); extra: the concurrency limiter's lease duration
--   S.release(c, st, e, n, lease)  (concurrency only): the reply and the new state (nil: unchanged)
--   S.afterReset(st, fresh)     (optional) what a reset keeps (the lease sequence)
--   S.reconfigure(c, st, e, c2) the state under c2 (CORE-13)
--   S.store(key, c, st)         writes the state (the key holds the state only)
--   S.idle(c, st)               the instant the state becomes idle (CORE-15), nil for never
--
-- The arguments (ARGV of a script, args of a function): [1] the operation (create, acquire,
-- release, reset, reconfigure), [2] now, [3 ...] the configuration's fields, then the operation's
-- arguments: acquire: permits (concurrency: and a lease duration); release: permits (concurrency:
-- and a lease handle, or ""); reconfigure: the new configuration's fields.
--
-- KEY is the key of the call in progress, which run sets first: a strategy reads its key there,
-- as a function has no KEYS. (In a library, what is built once outlives a call: KEY is the one
-- value a call writes, and every call writes it before reading it.)
local KEY

local function readConfig(S, args, first)
    local values = {}
    for i = 1, #S.fields do values[S.fields[i]] = args[first + i - 1] end
    return S.config(values)
end

local function refusalReply(kind, r)
    if r.maximum then return result(kind, 'field', r.field, 'problem', r.problem, 'maximum', str(r.maximum)) end
    return result(kind, 'field', r.field, 'problem', r.problem)
end

-- Writes the state and sets the key to expire when the state becomes idle (SHARED-4): on the
-- server's clock at that instant, rounded up to the millisecond (Redis deletes a key once its
-- clock is past the expiry, so never before the state is idle); never, when the state never
-- becomes idle. On a caller's clock Redis cannot tell when that instant comes: the key is kept,
-- and the reply's "idle" lets the caller expire it on its own clock (SHARED-5). Returns the
-- reply with "idle" added, its remaining computed (when `remainingAt` is given) from the state as
-- stored.
local function write(S, key, c, st, clock, reply, remainingAt)
    S.store(key, c, st)
    if remainingAt then reply = allowed(S.remaining(c, st, remainingAt)) end
    local idle = S.idle(c, st)
    local text = idle and str(idle) or 'never'
    if clock == 'server' and idle then
        redis.call('PEXPIREAT', key, millisecondsUp(text))
    else
        redis.call('PERSIST', key)
    end
    reply[#reply + 1] = 'idle'
    reply[#reply + 1] = text
    return reply
end

-- The state of the limiter at `key` for an event at `now` (SHARED-4: a key that does not exist
-- holds a new limiter created at now), its evaluation instant (CORE-10), and, when the key did not
-- exist and the new state is not idle at now, that state: an event that changes nothing still
-- writes it (CORE-15: a bucket that starts below its capacity), so that the next event finds the
-- limiter created here and not a new one at its own instant. Fourth: whether the key existed.
local function loadState(S, key, c, now)
    local loaded = S.load(key, c)
    if loaded then return loaded, maxN(now, S.last(loaded)), nil, true end
    local st = S.initial(c, now)
    local idle = S.idle(c, st)
    return st, now, (not idle or cmp(idle, now) > 0) and st or nil, false
end

local function run(S, keys, args)
    KEY = keys[1]
    local key = KEY
    local operation = args[1]
    local now, problem = readNow(args[2] or '')
    if not now then
        if problem == 'negative' then return invalid('now', 'mustNotBeNegative') end -- CORE-1
        return redis.error_reply('now must be empty (the server clock) or an integer 0 ... Int64.max')
    end
    local clock = args[2] == '' and 'server' or 'caller'
    local c, bad = readConfig(S, args, 3)
    local rest = 3 + #S.fields

    if operation == 'create' then
        if not c then return refusalReply('refused', bad) end -- CORE-3
        -- CORE-4: the initial state at t0, stored, so that an event with an earlier instant is
        -- evaluated at t0 (CORE-10) as long as the key exists.
        return write(S, key, c, S.initial(c, now), clock, result('created'))
    end
    if not c then
        return redis.error_reply('configuration refused: ' .. bad.field .. ' ' .. bad.problem)
    end

    -- An event that changes the state writes it; one that does not (a refusal, a query, bad
    -- input: CORE-8) writes only a new limiter's state that is not idle (loadState).
    local st, e, fresh = loadState(S, key, c, now)
    local function unchanged(reply)
        if not fresh then return reply end
        return write(S, key, c, fresh, clock, reply)
    end

    if operation == 'acquire' then
        local negative, n = decimal(args[rest])
        if negative == nil then return redis.error_reply('permits must be an integer') end
        if negative and not isZero(n) then return unchanged(invalid('permits', 'mustNotBeNegative')) end -- CORE-9
        if cmp(n, S.maximum(c)) > 0 then return unchanged(neverAllowed()) end -- CORE-7
        if isZero(n) then return unchanged(allowed(S.remaining(c, st, e))) end -- CORE-9: a query
        local reply, changed = S.acquire(c, st, e, n, now, args[rest + 1] or '')
        if not changed then return unchanged(reply) end -- CORE-8: a refusal changes nothing
        return write(S, key, c, changed, clock, reply)
    elseif operation == 'release' then
        if not S.release then return unchanged(invalid('release', 'notSupported')) end -- CORE-11
        local negative, n = decimal(args[rest])
        if negative == nil then return redis.error_reply('permits must be an integer') end
        if negative and not isZero(n) then return unchanged(invalid('permits', 'mustNotBeNegative')) end -- CORE-9
        local reply, changed = S.release(c, st, e, n, args[rest + 1] or '')
        if not changed then return unchanged(reply) end
        return write(S, key, c, changed, clock, reply)
    elseif operation == 'reset' then
        local changed = S.initial(c, e) -- CORE-12: the initial state at e
        if S.afterReset then changed = S.afterReset(st, changed) end
        return write(S, key, c, changed, clock, nil, e)
    elseif operation == 'reconfigure' then
        local c2, refused = readConfig(S, args, rest)
        if not c2 then return unchanged(refusalReply('invalid', refused)) end -- CORE-13: state unchanged
        local changed = S.reconfigure(c, st, e, c2)
        return write(S, key, c2, changed, clock, nil, e)
    end
    return redis.error_reply('unknown operation ' .. tostring(operation))
end
