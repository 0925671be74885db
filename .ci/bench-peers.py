#!/usr/bin/env python3
"""`make bench-peers`: this package's benchmark beside Go's golang.org/x/time/rate (issue 20).

Builds the Go loops (Implementations/go-x-time-rate/bench, offline against the Debian source of
golang.org/x/time, as Implementations/setup.sh builds the shim), then runs the two benchmarks in
alternation, ROUNDS times each, in the same minutes: `ratelimit-bench --only peers --json` and the
Go binary, each reporting its medians. A pair's ratio is Go's nanoseconds over Swift's in the same
round (above 1: Swift is faster); the table gives the median over the rounds and their spread.

    python3 .ci/bench-peers.py [--rounds N] [--json]   (after swift build -c release --product ratelimit-bench)
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
GO_DIR = ROOT / "Implementations" / "go-x-time-rate"
GO_BUILD = GO_DIR / ".build-go"
X_TIME = pathlib.Path("/usr/share/gocode/src/golang.org/x/time/rate/rate.go")

# (Swift loop, Go loop, what the pair compares, least ratio Go/Swift the issue asks for)
PAIRS = [
    ("allowN-explicit-1", "allowN-explicit-1", "pure token bucket step / AllowN(t, 1), explicit instants", 1.0),
    ("allow-clock-1", "allow-clock-1", "lock tryAcquire / Allow(), each reading its clock", 1.5),
    ("allow-clock-1-coarse", "allow-clock-1", "lock tryAcquire on the coarse clock / Allow()", 5.0),
    ("allow-clock-2", "allow-clock-2", "2 threads: lock tryAcquire / 2 goroutines: Allow()", 1.5),
    ("atomic-clock-2", "allow-clock-2", "2 threads: atomic GCRA tryAcquire / 2 goroutines: Allow()", 1.5),
    ("allow-clock-4", "allow-clock-4", "4 threads: lock tryAcquire / 4 goroutines: Allow()", None),
    ("atomic-clock-4", "allow-clock-4", "4 threads: atomic GCRA tryAcquire / 4 goroutines: Allow()", None),
    ("allowN-explicit-2", "allowN-explicit-2", "2 threads: lock, clock never moves / 2 goroutines: AllowN(t, 1)", None),
]


def go_env():
    env = dict(os.environ)
    env.update(
        GOPATH=str(GO_BUILD / "gopath"), GOMODCACHE=str(GO_BUILD / "gopath" / "pkg" / "mod"),
        GOCACHE=str(GO_BUILD / "cache"), GOFLAGS="-mod=mod", GOPROXY="off", GOSUMDB="off",
        GOTOOLCHAIN="local", GO111MODULE="on")
    return env


def versions():
    go = subprocess.run(["go", "version"], capture_output=True, text=True).stdout.strip()
    x_time = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", "golang-golang-x-time-dev"], capture_output=True, text=True
    ).stdout.strip() or "unknown"
    swift = subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.splitlines()
    return {"go": go, "x/time": f"golang.org/x/time v0.3.0 (Debian golang-golang-x-time-dev {x_time})",
            "swift": swift[0] if swift else "unknown"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not X_TIME.exists() or subprocess.run(["which", "go"], capture_output=True).returncode != 0:
        sys.exit("bench-peers: needs go and golang.org/x/time (apt-get install golang-go golang-golang-x-time-dev)")
    GO_BUILD.mkdir(parents=True, exist_ok=True)
    subprocess.run(["go", "build", "-o", str(GO_BUILD / "bench"), "./bench"], cwd=GO_DIR, env=go_env(), check=True)
    swift_bench = ROOT / ".build" / "release" / "ratelimit-bench"

    ratios = {swift: [] for swift, *_ in PAIRS}
    times = {("swift", swift): [] for swift, *_ in PAIRS} | {("go", go): [] for _, go, *_ in PAIRS}
    for round in range(args.rounds):
        print(f"· round {round + 1} of {args.rounds}", file=sys.stderr)
        swift = json.loads(subprocess.run(
            [str(swift_bench), "--only", "peers", "--json"], capture_output=True, text=True, check=True).stdout)
        swift = {r["name"]: r["median"] for r in swift["results"]}
        go = json.loads(subprocess.run(
            [str(GO_BUILD / "bench")], capture_output=True, text=True, check=True).stdout)["results"]
        for swift_name, go_name, _, _ in PAIRS:
            ratios[swift_name].append(go[go_name] / swift[swift_name])
            times[("swift", swift_name)].append(swift[swift_name])
            times[("go", go_name)].append(go[go_name])

    rows = []
    for swift_name, go_name, what, target in PAIRS:
        ratio = statistics.median(ratios[swift_name])
        rows.append({
            "pair": what, "swift": swift_name, "go": go_name,
            "swiftNanoseconds": statistics.median(times[("swift", swift_name)]),
            "goNanoseconds": statistics.median(times[("go", go_name)]),
            "ratio": ratio, "spread": [min(ratios[swift_name]), max(ratios[swift_name])],
            "target": target, "met": None if target is None else ratio >= target,
        })
    if args.json:
        print(json.dumps({"versions": versions(), "rounds": args.rounds, "pairs": rows}, indent=1))
        return
    header = ("pair", "Swift ns", "Go ns", "Go / Swift", "spread", "target", "")
    lines = [header]
    for row in rows:
        lines.append((
            row["pair"], f"{row['swiftNanoseconds']:.1f}", f"{row['goNanoseconds']:.1f}", f"{row['ratio']:.2f}x",
            f"{row['spread'][0]:.2f}–{row['spread'][1]:.2f}",
            "" if row["target"] is None else f"≥ {row['target']:g}x",
            "" if row["met"] is None else ("met" if row["met"] else "MISSED")))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for index, line in enumerate(lines):
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())
        if index == 0:
            print("  ".join("-" * width for width in widths))
    for name, version in versions().items():
        print(f"{name}: {version}")
    print(f"medians of {args.rounds} rounds, each a Swift run then a Go run (11 repetitions each, medians)")


if __name__ == "__main__":
    main()
