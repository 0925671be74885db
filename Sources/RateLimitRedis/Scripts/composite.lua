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
