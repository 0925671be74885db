// Command shim drives golang.org/x/time/rate (unmodified) over the conformance protocol
// (Spec/protocol.md, version 2) on standard input and output: strategy token-bucket only.
//
// The clock is the one the library's API takes: every call is the `...At(t)` / `...N(t, n)` form
// with t = time.Unix(0, now), the protocol's instant as nanoseconds since the Unix epoch. Nothing
// of the library's arithmetic is replaced. See README.md for the mapping, the profile and how a
// refusal's wait is obtained (ReserveN on a copy of the limiter, which the original never sees).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"strconv"

	"time"

	"golang.org/x/time/rate"
)

const implementation = "golang.org/x/time/rate v0.3.0 (Debian golang-golang-x-time-dev 0.3.0-1)"

type object = map[string]interface{}

// instant is the time.Time the library is given for a protocol instant.
func instant(now int64) time.Time { return time.Unix(0, now) }

// limitOf is the library's Limit (events per second, a float64) for R permits per P nanoseconds:
// the float64 nearest to R·10^9/P, the best a caller can write.
func limitOf(permits, period int64) rate.Limit {
	if period == 0 {
		return rate.Every(0) // refusal cases only: rate.Inf, as Every gives for a zero interval
	}
	if permits == 0 {
		return 0 // refusal cases only
	}
	q := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(permits), big.NewInt(1_000_000_000)), big.NewInt(period))
	f, _ := q.Float64()
	return rate.Limit(f)
}

// remaining is the largest m in [0, burst] that AllowN(t, m) would admit right now, asked of
// copies of the limiter (the original is not touched); AllowN is monotone in m.
func remaining(lim *rate.Limiter, t time.Time) int64 {
	allows := func(m int64) bool {
		probe := *lim //nolint:govet // a copy of the limiter's state; its mutex is unlocked here
		return probe.AllowN(t, int(m))
	}
	burst := int64(lim.Burst())
	if burst < 0 || !allows(0) {
		return 0
	}
	lo, hi := int64(0), burst // allows(lo) holds
	for lo < hi {
		mid := lo + (hi-lo)/2 + 1
		if allows(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

func integer(v interface{}) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	return i, err == nil
}

func allowed(r int64) object { return object{"kind": "allowed", "remaining": r} }

type bucket struct {
	lim *rate.Limiter
}

// create builds the limiter for a token-bucket configuration at instant now.
func create(cfg object, now int64) (*bucket, object) {
	capacity, ok1 := integer(cfg["capacity"])
	permits, ok2 := integer(cfg["permitsPerPeriod"])
	period, ok3 := integer(cfg["periodNanoseconds"])
	if !ok1 || !ok2 || !ok3 {
		return nil, object{"type": "unsupported", "reason": "a field is missing or not an integer"}
	}
	initial := capacity
	if v, present := cfg["initialTokens"]; present {
		if initial, ok1 = integer(v); !ok1 {
			return nil, object{"type": "unsupported", "reason": "initialTokens is not an integer"}
		}
	}
	if capacity > math.MaxInt || capacity < math.MinInt {
		return nil, object{"type": "unsupported", "reason": "capacity does not fit the library's int burst"}
	}
	// NewLimiter validates nothing: a zero, negative or out-of-range field is accepted as it is.
	lim := rate.NewLimiter(limitOf(permits, period), int(capacity))
	if initial != capacity {
		// The library has no initial tokens: a new Limiter is full. I < C is reached with the
		// library's own AllowN(t0, C − I), as a caller starts a limiter part-used.
		if initial < 0 || initial > capacity {
			return nil, object{"type": "unsupported", "reason": "the library has no initial tokens; the shim reaches them with AllowN(t0, C - I), which needs 0 <= I <= C"}
		}
		if !lim.AllowN(instant(now), int(capacity-initial)) {
			return nil, object{"type": "unsupported", "reason": fmt.Sprintf("a new Limiter does not hold C - I = %d tokens at creation (it refills at most 292 years from the zero time.Time)", capacity-initial)}
		}
	}
	return &bucket{lim: lim}, nil
}

func (b *bucket) apply(ev object, now int64) object {
	t := instant(now)
	switch ev["kind"] {
	case "acquire":
		n, ok := integer(ev["permits"])
		if !ok || n > math.MaxInt || n < math.MinInt {
			return object{"kind": "invalid", "field": "permits", "problem": "notSupported"}
		}
		// AllowN(t, n) for every n: zero (the library's AllowN(t, 0)) and negative included.
		before := *b.lim //nolint:govet // the state before the event, for the wait of a refusal
		if b.lim.AllowN(t, int(n)) {
			return allowed(remaining(b.lim, t))
		}
		// Refused (AllowN stores nothing then). The wait is the library's own answer to "how long
		// until n tokens": ReserveN(t, n).DelayFrom(t), asked of the copy taken before the event,
		// which is then dropped. OK() false (n above the burst) is the library's "never".
		r := before.ReserveN(t, int(n))
		if !r.OK() {
			return object{"kind": "neverAllowed"}
		}
		// A wait past the end of the protocol's timeline is sent as it is (CONF-1); a
		// time.Duration is at most math.MaxInt64 ns, the most the protocol carries.
		wait := int64(r.DelayFrom(t))
		return object{"kind": "rejected", "retryAfterNanoseconds": wait}
	case "release":
		return object{"kind": "invalid", "field": "release", "problem": "notSupported"}
	case "reconfigure":
		cfg, _ := ev["configuration"].(map[string]interface{})
		capacity, ok1 := integer(cfg["capacity"])
		permits, ok2 := integer(cfg["permitsPerPeriod"])
		period, ok3 := integer(cfg["periodNanoseconds"])
		if !ok1 || !ok2 || !ok3 {
			return object{"kind": "invalid", "field": "configuration", "problem": "notSupported"}
		}
		// SetLimitAt then SetBurstAt at the same t: each advances the tokens to t first.
		b.lim.SetLimitAt(t, limitOf(permits, period))
		b.lim.SetBurstAt(t, int(capacity))
		return allowed(remaining(b.lim, t))
	}
	return nil
}

func main() {
	in := json.NewDecoder(bufio.NewReaderSize(os.Stdin, 1<<16))
	in.UseNumber()
	out := bufio.NewWriter(os.Stdout)
	write := func(v object) {
		line, err := json.Marshal(v)
		if err != nil {
			line = []byte(`{"type":"error","message":"cannot encode the answer"}`)
		}
		out.Write(line)
		out.WriteByte('\n')
		out.Flush()
	}
	limiters := map[string]*bucket{}
	profile := object{
		"timeUnitNanoseconds":       1,
		"largestInstantNanoseconds": int64(math.MaxInt64),
		"monotonic":                 false, // AllowN(t, n) takes any t, and advance() handles t before last
		"events":                    []string{"weighted", "query", "invalid", "reconfigure"},
		"toleranceNanoseconds":      0,
		"validation":                true,
		"createdAtFirstEvent":       false,
	}
	for {
		var msg object
		if err := in.Decode(&msg); err != nil {
			return
		}
		id, _ := msg["id"].(string)
		switch msg["type"] {
		case "hello":
			version := int64(1)
			if v, ok := integer(msg["protocol"]); ok && v >= 2 {
				version = 2
			}
			answer := object{"type": "hello", "protocol": version, "implementation": implementation,
				"strategies": []string{"token-bucket"}}
			if version == 2 {
				answer["profiles"] = object{"token-bucket": profile}
			}
			write(answer)
		case "create":
			if msg["strategy"] != "token-bucket" {
				write(object{"type": "unsupported", "id": id, "reason": "x/time/rate is a token bucket"})
				continue
			}
			cfg, _ := msg["configuration"].(map[string]interface{})
			now, _ := integer(msg["now"])
			b, refusal := create(cfg, now)
			if refusal != nil {
				refusal["id"] = id
				write(refusal)
				continue
			}
			limiters[id] = b
			write(object{"type": "created", "id": id})
		case "event":
			b := limiters[id]
			ev, _ := msg["event"].(map[string]interface{})
			now, _ := integer(msg["now"])
			var result object
			if b != nil {
				result = b.apply(ev, now)
			}
			if result == nil {
				write(object{"type": "error", "message": "unknown limiter or event"})
				continue
			}
			write(object{"type": "result", "id": id, "result": result})
		case "drop":
			delete(limiters, id)
			write(object{"type": "dropped", "id": id})
		case "bye":
			return
		default:
			write(object{"type": "error", "message": "unknown message type"})
		}
	}
}
