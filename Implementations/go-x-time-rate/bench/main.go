// The Go side of `make bench-peers` (issue 20, section 3): golang.org/x/time/rate's own loops,
// the ones the Swift benchmark sets beside them, timed the same way (a warm-up, then repetitions,
// the median nanoseconds per operation), printed as one JSON object for .ci/bench-peers.py.
//
//	allowN-explicit-1   AllowN(t, 1) with t += 1 µs, a limiter of 1 per µs and burst 100
//	allowN-explicit-2   the same from 2 goroutines on one limiter (each its own t)
//	allow-clock-1       Allow() (AllowN(time.Now(), 1)) on a limiter that always admits
//	allow-clock-2       the same from 2 goroutines
//	allow-clock-4       the same from 4 goroutines (more than the 2 cores)
package main

import (
	"encoding/json"
	"flag"
	"os"
	"runtime"
	"sort"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

var sink int

// endless admits every call: 10^12 tokens a second, a burst of 2^40 (as the Swift side's bucket).
func endless() *rate.Limiter { return rate.NewLimiter(rate.Limit(1e12), 1<<40) }

// explicit runs AllowN(t, 1) n times, t advancing 1 µs a call from start.
func explicit(lim *rate.Limiter, start int64, n int) int {
	ok := 0
	for i := 0; i < n; i++ {
		if lim.AllowN(time.Unix(0, start+int64(i)*1000), 1) {
			ok++
		}
	}
	return ok
}

func clocked(lim *rate.Limiter, n int) int {
	ok := 0
	for i := 0; i < n; i++ {
		if lim.Allow() {
			ok++
		}
	}
	return ok
}

// timed returns nanoseconds per operation of body(n) run by `goroutines` goroutines at once.
func timed(goroutines, n int, body func(g, n int) int) float64 {
	var wg sync.WaitGroup
	var mu sync.Mutex
	start := time.Now()
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := body(g, n)
			mu.Lock()
			sink += r
			mu.Unlock()
		}(g)
	}
	wg.Wait()
	return float64(time.Since(start).Nanoseconds()) / float64(n*goroutines)
}

func median(values []float64) float64 {
	sort.Float64s(values)
	m := len(values) / 2
	if len(values)%2 == 1 {
		return values[m]
	}
	return (values[m-1] + values[m]) / 2
}

func main() {
	operations := flag.Int("n", 2_000_000, "operations per repetition (per goroutine)")
	repetitions := flag.Int("r", 11, "repetitions after the warm-up")
	flag.Parse()
	runtime.GOMAXPROCS(2)

	cases := []struct {
		name       string
		goroutines int
		body       func() func(g, n int) int
	}{
		{"allowN-explicit-1", 1, func() func(g, n int) int {
			lim := rate.NewLimiter(rate.Every(time.Microsecond), 100)
			next := int64(0)
			return func(_, n int) int { r := explicit(lim, next, n); next += int64(n) * 1000; return r }
		}},
		{"allowN-explicit-2", 2, func() func(g, n int) int {
			lim := rate.NewLimiter(rate.Every(time.Microsecond), 100)
			var next [2]int64
			return func(g, n int) int { r := explicit(lim, next[g], n); next[g] += int64(n) * 1000; return r }
		}},
		{"allow-clock-1", 1, func() func(g, n int) int {
			lim := endless()
			return func(_, n int) int { return clocked(lim, n) }
		}},
		{"allow-clock-2", 2, func() func(g, n int) int {
			lim := endless()
			return func(_, n int) int { return clocked(lim, n) }
		}},
		{"allow-clock-4", 4, func() func(g, n int) int {
			lim := endless()
			return func(_, n int) int { return clocked(lim, n) }
		}},
	}
	// Interleaved, as the Swift side times a floor and its cases: each repetition runs every case.
	bodies := make([]func(g, n int) int, len(cases))
	samples := make([][]float64, len(cases))
	for i, c := range cases {
		bodies[i] = c.body()
		timed(c.goroutines, *operations/10, bodies[i])
	}
	for r := 0; r < *repetitions; r++ {
		for i, c := range cases {
			samples[i] = append(samples[i], timed(c.goroutines, *operations, bodies[i]))
		}
	}
	out := map[string]any{"go": runtime.Version(), "results": map[string]float64{}}
	for i, c := range cases {
		out["results"].(map[string]float64)[c.name] = median(samples[i])
	}
	json.NewEncoder(os.Stdout).Encode(out)
	if sink < 0 {
		println(sink)
	}
}
