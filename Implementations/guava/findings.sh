#!/bin/sh
# Reproduces the Guava findings of Spec/PayLater.md and Spec/WarmUp.md with the library alone:
# compiles GuavaFindings.java against the installed Guava jar (the Debian package libguava-java,
# 31.1; GUAVA_JAR to use another) into a git-ignored folder and runs it. Exits 1 when a finding no
# longer reproduces. Needs a JDK (javac, java).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
JAR=${GUAVA_JAR:-/usr/share/java/guava-31.1-jre.jar}
OUT="$HERE/.build-java"
mkdir -p "$OUT"
javac -encoding UTF-8 -cp "$JAR" -d "$OUT" "$HERE/com/google/common/util/concurrent/GuavaFindings.java"
java -cp "$JAR:$OUT" com.google.common.util.concurrent.GuavaFindings
