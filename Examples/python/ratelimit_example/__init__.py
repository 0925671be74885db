"""The Python example's code, split by concern; `../ratelimiter.py` is the command that runs it.

    bugs.py           the injectable bugs (--bug NAME, --list-bugs) and the one registry of those injected
    results.py        results of an event (CORE-5 .. CORE-8), Int64 bounds and integer helpers
    config.py         configuration validation (CORE-3 and each strategy's X-1 table)
    token_buckets.py  token bucket (TB), interval token bucket (TBI)
    gcra.py           GCRA, pay later (PL), warm-up (WU)
    windows.py        fixed window (FW), sliding window log (SWL), counter (SWC), segments (SWS)
    leaky_buckets.py  leaky bucket meter (LBM) and queue (LBQ)
    concurrency.py    concurrency limiter (CL)
    strategies.py     the strategies by name, one event applied (CORE-4 .. CORE-13), probes
    composite.py      composite limits (Spec/CompositeLimit.md)
    wait_queue.py     the wait queue (Spec/WaitQueue.md)
    adaptive.py       adaptive rate and concurrency (Spec/AdaptiveLimits.md)
    protocol.py       the JSON-lines protocol (Spec/protocol.md) on stdin/stdout
"""
