#!/bin/sh
# Sets up every shim of Implementations/ (README.md there): idempotent, prints what it does.
#
#   sh Implementations/setup.sh          (from anywhere; needs python3, and Go or apt-get)
#
# - Go shim: needs `go` and the Debian source of golang.org/x/time 0.3.0
#   (/usr/share/gocode/src/golang.org/x/time); installs golang-go and golang-golang-x-time-dev
#   with apt-get only when one is missing (as root, or with sudo), then builds the shim offline
#   into Implementations/go-x-time-rate/.build-go/ (git-ignored; the Go build cache goes there too).
# - Python shims: a virtual environment in Implementations/.venv (git-ignored) with the pinned
#   versions of requirements.txt; nothing is installed system-wide.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
GOSRC=/usr/share/gocode/src/golang.org/x/time
X_TIME_VERSION=0.3.0-1

say() { printf 'setup: %s\n' "$*"; }

# --- Go -------------------------------------------------------------------------------------------
if command -v go >/dev/null 2>&1 && [ -f "$GOSRC/rate/rate.go" ]; then
    say "Go found: $(go version)"
else
    say "Go or golang.org/x/time is missing: installing the Debian packages golang-go and golang-golang-x-time-dev"
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y golang-go golang-golang-x-time-dev
    elif command -v sudo >/dev/null 2>&1; then
        sudo apt-get install -y golang-go golang-golang-x-time-dev
    else
        say "cannot install them (not root, no sudo): run 'apt-get install -y golang-go golang-golang-x-time-dev' as root"
        exit 1
    fi
fi
installed=$(dpkg-query -W -f='${Version}' golang-golang-x-time-dev 2>/dev/null || echo unknown)
if [ "$installed" = "$X_TIME_VERSION" ]; then
    say "golang.org/x/time: Debian golang-golang-x-time-dev $installed (golang.org/x/time v0.3.0) in $GOSRC"
else
    say "WARNING: golang-golang-x-time-dev is $installed, the shim and its findings were written against $X_TIME_VERSION"
fi

GODIR="$HERE/go-x-time-rate"
BUILD="$GODIR/.build-go"
mkdir -p "$BUILD"
say "building the Go shim offline into ${BUILD#"$HERE/"}/shim"
(
    cd "$GODIR"
    GOPATH="$BUILD/gopath" GOMODCACHE="$BUILD/gopath/pkg/mod" GOCACHE="$BUILD/cache" \
        GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local GO111MODULE=on \
        go build -o "$BUILD/shim" .
)

# --- Python ---------------------------------------------------------------------------------------
VENV="$HERE/.venv"
if [ -x "$VENV/bin/python" ]; then
    say "virtual environment found: ${VENV#"$HERE/"} ($("$VENV/bin/python" --version 2>&1))"
else
    say "creating the virtual environment ${VENV#"$HERE/"}"
    python3 -m venv "$VENV"
fi
say "installing the pinned packages of requirements.txt into it:"
sed -n 's/^\([A-Za-z][^ #]*==[^ #]*\).*/    \1/p' "$HERE/requirements.txt"
"$VENV/bin/pip" install --disable-pip-version-check -q -r "$HERE/requirements.txt"
"$VENV/bin/pip" freeze --disable-pip-version-check | sed 's/^/    installed: /'

say "done; the commands are in Implementations/matrix.json (run them from the repository root)"
