module ratelimit-conformance/implementations/go-x-time-rate

go 1.19

require golang.org/x/time v0.3.0

// The Debian package golang-golang-x-time-dev 0.3.0-1 installs the module's source here; the
// build uses it as it is, without the network (see README.md and ../setup.sh).
replace golang.org/x/time => /usr/share/gocode/src/golang.org/x/time
