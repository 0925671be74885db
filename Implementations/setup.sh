#!/bin/sh
# Sets up every shim of Implementations/ (README.md there): idempotent, prints what it does.
#
#   sh Implementations/setup.sh          (from anywhere; needs python3, and Go, a JDK and Guava or apt-get)
#
# - Go shim: needs `go` and the Debian source of golang.org/x/time 0.3.0
#   (/usr/share/gocode/src/golang.org/x/time); installs golang-go and golang-golang-x-time-dev
#   with apt-get only when one is missing (as root, or with sudo), then builds the shim offline
#   into Implementations/go-x-time-rate/.build-go/ (git-ignored; the Go build cache goes there too).
# - Java shim (Guava): needs a JDK (javac, java) and the Debian Guava jar
#   (/usr/share/java/guava-31.1-jre.jar); installs default-jdk-headless or libguava-java with
#   apt-get only when missing, then compiles the shim against the jar into
#   Implementations/guava/.build-java/ (git-ignored).
# - Redis rows: need redis-server (installs the Debian package when missing) and a C compiler for
#   common/redisclock.c (built into Implementations/.build-redisclock/, git-ignored).
# - Python shims: a virtual environment in Implementations/.venv (git-ignored) with the pinned
#   versions of requirements.txt; nothing is installed system-wide.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
GOSRC=/usr/share/gocode/src/golang.org/x/time
X_TIME_VERSION=0.3.0-1

say() { printf 'setup: %s\n' "$*"; }

# apt_install PACKAGE...: as root, or with sudo; fails with the command to run otherwise.
apt_install() {
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo apt-get install -y "$@"
    else
        say "cannot install them (not root, no sudo): run 'apt-get install -y $*' as root"
        exit 1
    fi
}

# --- Go -------------------------------------------------------------------------------------------
if command -v go >/dev/null 2>&1 && [ -f "$GOSRC/rate/rate.go" ]; then
    say "Go found: $(go version)"
else
    say "Go or golang.org/x/time is missing: installing the Debian packages golang-go and golang-golang-x-time-dev"
    apt_install golang-go golang-golang-x-time-dev
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

# --- Java (Guava) -------------------------------------------------------------------------------
GUAVA_JAR=/usr/share/java/guava-31.1-jre.jar
GUAVA_VERSION=31.1-1
missing=""
command -v javac >/dev/null 2>&1 && command -v java >/dev/null 2>&1 || missing="default-jdk-headless"
[ -f "$GUAVA_JAR" ] || missing="$missing libguava-java"
if [ -n "$missing" ]; then
    say "installing the Debian packages$(printf ' %s' $missing) (a JDK and Guava's jar are missing)"
    apt_install $missing
fi
say "Java found: $(java -version 2>&1 | head -n 1)"
installed=$(dpkg-query -W -f='${Version}' libguava-java 2>/dev/null || echo unknown)
if [ "$installed" = "$GUAVA_VERSION" ]; then
    say "Guava: Debian libguava-java $installed in $GUAVA_JAR"
else
    say "WARNING: libguava-java is $installed, the shim and its findings were written against $GUAVA_VERSION"
fi
JAVADIR="$HERE/guava"
say "compiling the Java shim into ${JAVADIR#"$HERE/"}/.build-java"
mkdir -p "$JAVADIR/.build-java"
javac -encoding UTF-8 -cp "$GUAVA_JAR" -d "$JAVADIR/.build-java" \
    "$JAVADIR/com/google/common/util/concurrent/GuavaShim.java" \
    "$JAVADIR/com/google/common/util/concurrent/JsonLine.java"

# --- Redis -----------------------------------------------------------------------------------------
# The Redis-backed rows (limits and throttled-py on Redis, ratelimit-io, redis-ratekit, the project's
# own scripts) each start a redis-server of their own whose wall clock is the suite's instant
# (common/redisclock.py, built with the C compiler); the self-test shows the emulation exact first.
if ! command -v redis-server >/dev/null 2>&1; then
    say "redis-server is missing: installing the Debian package redis-server"
    apt_install redis-server
fi
say "Redis found: $(redis-server --version)"
say "checking that redis-server's clock follows the suite's exactly (common/redisclock.py --self-test):"
if checked=$(python3 "$HERE/common/redisclock.py" --self-test); then
    printf '%s\n' "$checked" | sed 's/^/    /'
else
    printf '%s\n' "$checked" | sed 's/^/    /'
    say "the Redis rows cannot run here (above: why)"
    exit 1
fi

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

# A library whose pins conflict with the shared environment's (limiter 0.5.0 needs token-bucket
# < 0.4) has a requirements.txt of its own beside its shim, and a virtual environment there.
for own in "$HERE"/*/requirements.txt; do
    [ -f "$own" ] || continue
    dir=$(dirname "$own")
    if [ ! -x "$dir/.venv/bin/python" ]; then
        say "creating the virtual environment ${dir#"$HERE/"}/.venv"
        python3 -m venv "$dir/.venv"
    fi
    # A library that declares more than it needs (a newer Python) says so in a "# pip-option:" line.
    options=$(sed -n 's/^# pip-option: //p' "$own")
    say "installing ${own#"$HERE/"} into it${options:+ ($options)}"
    "$dir/.venv/bin/pip" install --disable-pip-version-check -q $options -r "$own"
done

say "done; the commands are in Implementations/matrix.json (run them from the repository root)"
