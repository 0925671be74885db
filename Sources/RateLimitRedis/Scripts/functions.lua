#!lua name=ratelimit_b5208b1e1eaa
-- functions.lua: the scripts of this folder as one Redis Functions library (Redis 7.0 and later):
-- FUNCTION LOAD it once, then FCALL <function> 1 <key> <arguments>, with the arguments and the
-- reply of the scripts (README.md). Written by `make redis-scripts` from prelude.lua and the
-- strategies' files: do not edit.
--
-- FUNCTION LOAD runs this chunk with no global but `redis`, so what the files do at their top
-- level (the prelude's constants, each strategy's table) runs at the first call instead, in
-- build, and what it builds serves every later call until the library is unloaded.

local function build()
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

local strategies = {}

strategies['token-bucket'] = (function()
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
return S
end)()

strategies['token-bucket-interval'] = (function()
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
return S
end)()

strategies['gcra'] = (function()
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
return S
end)()

strategies['fixed-window'] = (function()
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
return S
end)()

strategies['sliding-window-log'] = (function()
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
return S
end)()

strategies['leaky-bucket-meter'] = (function()
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
return S
end)()

strategies['concurrency'] = (function()
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
return S
end)()

-- composite.lua: a composite limit (Spec/CompositeLimit.md, COMP-2 ... COMP-8) over the keys of
-- its limits, decided by one call (SHARED-9): every limit is asked first, nothing is written until
-- every answer is known, so a refusal by one limit leaves every limit's state as it was (CORE-8).
-- Not a script by itself: `make redis-scripts` puts it after the prelude and every strategy's
-- table, in the library (the function `<library>_composite`) and in composite-script.lua.
--
-- The keys: the call declares one key per limit, limit i (from 1) at KEYS[i] (`<key>:<i>` in
-- the Swift limiter and the shim), all with one hash tag, so one slot. Every key the call touches
-- is declared, so while a cluster moves the slot, a call that would find some of the keys moved
-- and not the others is answered `TRYAGAIN` by Redis instead of running (SHARED-9). So that a
-- call finds all of them or none, every write writes every limit and gives every key the same
-- expiry: the instant the last limit becomes idle. The arguments: [1] the operation, [2] now (as for the strategies), [3] the number of
-- limits k, then each limit's strategy identifier followed by its fields; then the operation's
-- arguments: acquire: permits and the lease duration of its concurrency limits (SHARED-6);
-- release: permits; reconfigure: a whole composite again (k, then each limit).

-- The composite's limits read from args at `first`: a list of {S, c, id}, and the index after
-- them; or nil and a refusal reply (COMP-2: no limit; then limit by limit, its own refusal, or a
-- strategy this store has no script for, which includes the leaky bucket queue).
local function readLimits(strategies, args, first, kind)
    local negative, count = decimal(args[first] or '')
    if negative == nil or negative or isZero(count) then
        return nil, result(kind, 'field', 'limits', 'problem', 'mustBePositive')
    end
    local limits, index = {}, first + 1
    for i = 1, small(count) or math.huge do -- a count beyond the arguments ends at the first missing
        local id = args[index]
        local S = strategies[id]
        if not S then return nil, result(kind, 'field', 'limits[' .. (i - 1) .. ']', 'problem', 'notSupported') end
        local c, bad = readConfig(S, args, index + 1)
        if not c then return nil, refusalReply(kind, bad) end
        limits[i] = { S = S, c = c, id = id }
        index = index + 1 + #S.fields
    end
    return limits, index
end

-- Limit i's state at the event, its evaluation instant and the state to write whatever the
-- answer, as `run` loads one limit's (loadState).
local function loadLimit(limit, key, now)
    KEY = key
    return loadState(limit.S, key, limit.c, now)
end

-- The instant every limit is idle (the latest of theirs, CORE-15), or nil for never, read from
-- the stored states (a log's idle reads its entries).
local function idleOf(limits, states, keys)
    local latest = ZERO
    for i, limit in ipairs(limits) do
        KEY = keys[i]
        local idle = limit.S.idle(limit.c2 or limit.c, states[i])
        if not idle then return nil end
        latest = maxN(latest, idle)
    end
    return latest
end

-- Adds "idle" to a reply: when every limit is idle, or "never", so that a caller's clock can
-- expire the keys (SHARED-5), as `write` does for one limit.
local function withIdle(reply, idle)
    reply[#reply + 1] = 'idle'
    reply[#reply + 1] = idle and str(idle) or 'never'
    return reply
end

-- Writes every limit's state, then gives every key the composite's expiry (SHARED-4: on the
-- server's clock, once every limit is idle; on a caller's, none); returns that idle instant.
local function writeAll(limits, states, keys, clock)
    for i, limit in ipairs(limits) do
        KEY = keys[i]
        limit.S.store(keys[i], limit.c2 or limit.c, states[i])
    end
    local idle = idleOf(limits, states, keys)
    local at = clock == 'server' and idle and millisecondsUp(str(idle))
    for i = 1, #limits do
        if at then
            redis.call('PEXPIREAT', keys[i], at)
        else
            redis.call('PERSIST', keys[i])
        end
    end
    return idle
end

local function composite(strategies, keys, args)
    local operation = args[1]
    local now, problem = readNow(args[2] or '')
    if not now then
        if problem == 'negative' then return invalid('now', 'mustNotBeNegative') end -- CORE-1
        return redis.error_reply('now must be empty (the server clock) or an integer 0 ... Int64.max')
    end
    local clock = args[2] == '' and 'server' or 'caller'
    local limits, rest = readLimits(strategies, args, 3, 'refused')
    if limits and #keys ~= #limits then
        return redis.error_reply('the call declares ' .. #keys .. ' keys for ' .. #limits
            .. ' limits: one key per limit, in their order (SHARED-9)')
    end
    if operation == 'create' then
        if not limits then return rest end -- COMP-2
        local initial = {}
        for i, limit in ipairs(limits) do initial[i] = limit.S.initial(limit.c, now) end
        return withIdle(result('created'), writeAll(limits, initial, keys, clock))
    end
    if not limits then return redis.error_reply('configuration refused: ' .. rest[4] .. ' ' .. rest[6]) end

    local states, instants, fresh, existed = {}, {}, {}, {}
    local some, all = false, true
    for i, limit in ipairs(limits) do
        states[i], instants[i], fresh[i], existed[i] = loadLimit(limit, keys[i], now)
        some, all = some or existed[i], all and existed[i]
    end
    -- Answers `reply` after writing `changed` (every limit's new state), or, when nothing changed,
    -- after writing the states of the limits created here that are not idle (loadState), and
    -- with them the others': a write writes every limit. Keys found some present and some not
    -- (written before the keys were kept together, or one evicted) are written whole too, so a
    -- later move of their slot finds them together.
    local function finish(changed, reply)
        local current, writes = {}, some and not all
        for i = 1, #limits do
            local st = changed and changed[i] or fresh[i]
            current[i] = st or states[i]
            writes = writes or st ~= nil
        end
        if writes then return withIdle(reply, writeAll(limits, current, keys, clock)) end
        return withIdle(reply, idleOf(limits, current, keys))
    end
    -- Each limit's answer to its event: all admitted, the new states and the smallest remainder;
    -- otherwise COMP-5's refusal, with nothing recorded.
    local function applyToAll(eventOf)
        local changed, remaining = {}, nil
        local firstInvalid, never, shortfall, retryAfter = nil, false, ZERO, ZERO
        for i, limit in ipairs(limits) do
            KEY = keys[i]
            local reply, st = eventOf(i, limit, states[i], instants[i])
            local kind = reply[2]
            if kind == 'allowed' then
                changed[i] = st
                local left = select(2, decimal(reply[4]))
                remaining = remaining and minN(remaining, left) or left
            elseif kind == 'invalid' then
                firstInvalid = firstInvalid or reply
            elseif kind == 'neverAllowed' then
                never = true
            elseif kind == 'rejectedUntilRelease' then
                shortfall = maxN(shortfall, select(2, decimal(reply[4])))
            elseif kind == 'rejected' then
                retryAfter = maxN(retryAfter, select(2, decimal(reply[4])))
            else
                return nil, reply -- a server error
            end
        end
        if firstInvalid then return nil, firstInvalid end
        if never then return nil, neverAllowed() end
        if not isZero(shortfall) then return nil, result('rejectedUntilRelease', 'shortfall', str(shortfall)) end
        if not isZero(retryAfter) then return nil, result('rejected', 'retryAfterNanoseconds', str(retryAfter)) end
        return changed, allowed(remaining)
    end
    -- Every limit takes the state `nextState` gives (a reset, a reconfigure: never refused), and
    -- the answer is the smallest remainder, read after the writes: a log's remainder is read from
    -- its stored entries.
    local function replaceAll(nextState)
        local replaced = {}
        for i, limit in ipairs(limits) do
            KEY = keys[i]
            replaced[i] = nextState(i, limit, states[i], instants[i])
        end
        local idle = writeAll(limits, replaced, keys, clock)
        local remaining = nil
        for i, limit in ipairs(limits) do
            KEY = keys[i]
            local left = limit.S.remaining(limit.c2 or limit.c, replaced[i], instants[i])
            remaining = remaining and minN(remaining, left) or left
        end
        return withIdle(allowed(remaining), idle)
    end
    local function answer(changed, reply)
        if changed then return finish(changed, reply) end
        if reply.err then return reply end
        return finish(nil, reply)
    end

    if operation == 'acquire' then
        local negative, n = decimal(args[rest])
        if negative == nil then return redis.error_reply('permits must be an integer') end
        if negative and not isZero(n) then return finish(nil, invalid('permits', 'mustNotBeNegative')) end -- CORE-9
        for _, limit in ipairs(limits) do
            if cmp(n, limit.S.maximum(limit.c)) > 0 then return finish(nil, neverAllowed()) end -- COMP-6
        end
        local lease = args[rest + 1] or ''
        return answer(applyToAll(function(_, limit, st, e) -- COMP-4
            if isZero(n) then return allowed(limit.S.remaining(limit.c, st, e)) end -- CORE-9: a query
            return limit.S.acquire(limit.c, st, e, n, now, lease)
        end))
    elseif operation == 'release' then -- COMP-7: to the concurrency limits; the others are asked 0
        local holds = false
        for _, limit in ipairs(limits) do holds = holds or limit.S.release ~= nil end
        if not holds then return finish(nil, invalid('release', 'notSupported')) end
        local negative, n = decimal(args[rest])
        if negative == nil then return redis.error_reply('permits must be an integer') end
        if negative and not isZero(n) then return finish(nil, invalid('permits', 'mustNotBeNegative')) end
        return answer(applyToAll(function(_, limit, st, e)
            if not limit.S.release then return allowed(limit.S.remaining(limit.c, st, e)) end
            return limit.S.release(limit.c, st, e, n, '')
        end))
    elseif operation == 'reset' then -- COMP-7: every limit's initial state at its instant
        return replaceAll(function(_, limit, st, e)
            local changed = limit.S.initial(limit.c, e) -- CORE-12
            if limit.S.afterReset then changed = limit.S.afterReset(st, changed) end
            return changed
        end)
    elseif operation == 'reconfigure' then -- COMP-8: limit by limit, the same shape
        local replacement, refused = readLimits(strategies, args, rest, 'invalid')
        if not replacement then return finish(nil, refused) end
        if #replacement ~= #limits then
            return finish(nil, invalid('limits', 'notSupported'))
        end
        for i, limit in ipairs(limits) do
            if replacement[i].id ~= limit.id then return finish(nil, invalid('limits[' .. (i - 1) .. ']', 'notSupported')) end
        end
        return replaceAll(function(i, limit, st, e)
            limit.c2 = replacement[i].c
            return limit.S.reconfigure(limit.c, st, e, limit.c2)
        end)
    end
    return redis.error_reply('unknown operation ' .. tostring(operation))
end

return run, strategies, composite
end

local run, strategies, composite

local function call(strategy)
    return function(keys, args)
        if not run then run, strategies, composite = build() end
        if strategy == 'composite' then return composite(strategies, keys, args) end
        return run(strategies[strategy], keys, args)
    end
end

redis.register_function('ratelimit_b5208b1e1eaa_token_bucket', call('token-bucket'))
redis.register_function('ratelimit_b5208b1e1eaa_token_bucket_interval', call('token-bucket-interval'))
redis.register_function('ratelimit_b5208b1e1eaa_gcra', call('gcra'))
redis.register_function('ratelimit_b5208b1e1eaa_fixed_window', call('fixed-window'))
redis.register_function('ratelimit_b5208b1e1eaa_sliding_window_log', call('sliding-window-log'))
redis.register_function('ratelimit_b5208b1e1eaa_leaky_bucket_meter', call('leaky-bucket-meter'))
redis.register_function('ratelimit_b5208b1e1eaa_concurrency', call('concurrency'))
redis.register_function('ratelimit_b5208b1e1eaa_composite', call('composite'))
