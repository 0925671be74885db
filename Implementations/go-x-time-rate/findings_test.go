package main

// Each finding of README.md, reproduced with golang.org/x/time/rate alone (no shim code: only
// NewLimiter, AllowN, ReserveN, SetLimitAt, SetBurstAt and TokensAt, at t = time.Unix(0, ns)).
// A test fails when the library no longer behaves as the finding says (for instance after an
// upgrade). Run: see README.md ("Checking the findings").

import (
	"math"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

func at(ns int64) time.Time { return time.Unix(0, ns) }

// perNs is the Limit of r tokens per p nanoseconds.
func perNs(r, p float64) rate.Limit { return rate.Limit(r * 1e9 / p) }

// CORE-9: AllowN(t, -1) is admitted and adds a token (reserveN: tokens -= float64(n), n unchecked).
func TestNegativePermitsAddTokens(t *testing.T) {
	lim := rate.NewLimiter(perNs(1, 10), 3)
	lim.AllowN(at(0), 3)
	if !lim.AllowN(at(0), -1) || lim.TokensAt(at(0)) != 1 {
		t.Fatalf("AllowN(t, -1) = refused or no token added: tokens %v", lim.TokensAt(at(0)))
	}
}

// CORE-10 (token-bucket/refusals-record-nothing): AllowN(10, 0) stores the state at 10; at 5,
// advance() moves last back to 5 keeping the tokens of 10, so the token earned from 5 to 10 is
// granted at 5 (Spec: rejected(5ns)) and earned again later.
func TestBackwardTimeRegrants(t *testing.T) {
	lim := rate.NewLimiter(perNs(1, 10), 3)
	lim.AllowN(at(0), 3) // initialTokens 0
	if lim.AllowN(at(10), 2) || lim.AllowN(at(5), 1) || !lim.AllowN(at(10), 0) {
		t.Fatal("setup steps differ")
	}
	if !lim.AllowN(at(5), 1) {
		t.Fatal("AllowN(5, 1) refused: the re-grant is gone")
	}
}

// CORE-9 (token-bucket/random-seed-7-trace-12): the same moving back of last, seen through a query.
func TestQueryAfterTimeWentBack(t *testing.T) {
	lim := rate.NewLimiter(perNs(1, 24), 6)
	lim.AllowN(at(24), 4) // initialTokens 2, created at 24
	if !lim.AllowN(at(48), 1) || !lim.AllowN(at(29), 1) || !lim.AllowN(at(53), 0) {
		t.Fatal("setup steps differ")
	}
	if got := math.Floor(lim.TokensAt(at(53))); got != 2 {
		t.Fatalf("whole tokens at 53 = %v, want 2 (Spec: 1)", got)
	}
}

// TB-4 (token-bucket/fractions-carry): 0.9 token at 3 ns; the missing 0.1 token is 1/3 ns, which
// durationFromTokens truncates to 0, so reserveN's wait is 0 and AllowN admits (Spec: rejected(1ns)).
func TestTruncatedWaitAdmitsEarly(t *testing.T) {
	lim := rate.NewLimiter(perNs(3, 10), 10)
	lim.AllowN(at(0), 10) // initialTokens 0
	if !lim.AllowN(at(3), 1) {
		t.Fatal("AllowN(3ns, 1) refused")
	}
}

// TB-4 (token-bucket/long-idle-near-limits): float64 tokens near 2^62 admit 2^62 - 1 tokens 1 ns early.
func TestHugeBucketAdmitsEarly(t *testing.T) {
	const c = 4611686018427387903
	lim := rate.NewLimiter(perNs(1, 1), c)
	lim.AllowN(at(0), c) // initialTokens 0
	if !lim.AllowN(at(1), 1) {
		t.Fatal("setup: the first token")
	}
	if !lim.AllowN(at(c), c) {
		t.Fatal("AllowN(2^62-1 ns, 2^62-1) refused (Spec: rejected(1ns))")
	}
}

// TB-5 (token-bucket/billion-per-nanosecond): with 10^9 tokens per ns, any deficit under 10^9
// tokens is under 1 ns of waiting, truncated to 0: after taking all 10^9 tokens, AllowN admits
// 999,999,999 more at the same instant (Spec: remaining 0).
func TestSubNanosecondDeficitsAreFree(t *testing.T) {
	lim := rate.NewLimiter(perNs(1e9, 1), 1_000_000_000)
	if !lim.AllowN(at(0), 1_000_000_000) {
		t.Fatal("setup")
	}
	if !lim.AllowN(at(0), 999_999_999) {
		t.Fatal("AllowN(0, 999999999) refused on an empty bucket")
	}
}

// TB-6 (token-bucket/retry-after-rounds-up): 2 tokens at 3 per 10 ns take 6.67 ns;
// ReserveN's DelayFrom says 6 ns (float seconds converted to Duration, truncated; Spec 7 ns).
func TestRetryAfterTruncated(t *testing.T) {
	lim := rate.NewLimiter(perNs(3, 10), 5)
	lim.AllowN(at(0), 5) // initialTokens 0
	if d := lim.ReserveN(at(0), 2).DelayFrom(at(0)); d != 6 {
		t.Fatalf("DelayFrom = %v, want 6ns", d)
	}
}

// TB-6 (token-bucket/year-period): one token a year; the float wait is 4 ns long.
func TestYearPeriodFloatWait(t *testing.T) {
	const year = 31557600000000000
	lim := rate.NewLimiter(perNs(1, year), 2)
	lim.AllowN(at(0), 2)
	if d := lim.ReserveN(at(0), 1).DelayFrom(at(0)); d != year+4 {
		t.Fatalf("DelayFrom = %d, want %d", int64(d), int64(year+4))
	}
}

// TB-10 (token-bucket/reconfigure-keeps-fraction): 2/3 of a token at 2 ns, then 1 per 2 ns;
// the missing 1/3 token is 2/3 ns, truncated to 0: admitted at once (Spec: remaining 0, 1 ns later).
func TestReconfigureThenTruncation(t *testing.T) {
	lim := rate.NewLimiter(perNs(1, 3), 10)
	lim.AllowN(at(0), 10)
	lim.SetLimitAt(at(2), perNs(1, 2))
	lim.SetBurstAt(at(2), 10)
	if !lim.AllowN(at(2), 1) {
		t.Fatal("AllowN(2ns, 1) refused after the reconfigure")
	}
}

// CORE-3: NewLimiter validates nothing; a zero burst, a zero or infinite limit (Every(0)) are accepted.
// Limit 0 is a special case in reserveN that spends the burst itself (lim.burst -= n).
func TestNoValidation(t *testing.T) {
	if lim := rate.NewLimiter(perNs(1, 1), 0); lim.Burst() != 0 {
		t.Fatal("burst 0 not kept")
	}
	zero := rate.NewLimiter(0, 1)
	if !zero.AllowN(at(0), 1) || zero.Burst() != 0 || zero.AllowN(at(1_000_000_000_000), 1) {
		t.Fatal("limit 0: the burst is no longer spent")
	}
	if inf := rate.NewLimiter(rate.Every(0), 0); !inf.AllowN(at(0), 1_000_000) {
		t.Fatal("an infinite limit (period 0) no longer admits everything")
	}
}

// Not exercised by the suite's cases: a new Limiter's last is the zero time.Time, and advance()
// refills at most time.Duration's 292 years from it, so a slow limiter does not start full.
func TestNewLimiterFullOnlyAfter292Years(t *testing.T) {
	const year = 31557600000000000
	lim := rate.NewLimiter(perNs(1, year), 1000)
	if tokens := lim.TokensAt(at(0)); tokens >= 1000 || tokens < 292 || tokens > 293 {
		t.Fatalf("tokens of a new limiter = %v", tokens)
	}
}
