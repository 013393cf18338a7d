#!/usr/bin/env bash
# A newcomer's first run on a fresh machine: `go run ./cmd/explore check`
# with an empty module cache and an empty build cache (the Go toolchain
# itself installed). Prints the wall and CPU time of the run, the bytes of
# modules downloaded, and which modules they were.
#
#   bash bench/first-run.sh                     # check -design demo2
#   DESIGN=redis/cad/none/plain bash bench/first-run.sh
#   TAGS=reality VERB='reproduce -h' bash bench/first-run.sh   # what the real-server verbs cost
#   WARM_STD=1 bash bench/first-run.sh          # the standard library already compiled
#
# Go does not ship the standard library compiled: a fresh machine's first
# build compiles the packages it uses (runtime, fmt, net/http for serve …)
# before lockcheck's own. WARM_STD=1 compiles those into the empty build
# cache first, outside the timing, to tell that share from the project's.
#
# Needs the module proxy (or GOPROXY) reachable and GNU time. The target
# for the main job is 15 s on a 2-core machine (issue 27); the caches are
# removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
design=${DESIGN:-demo2}
verb=${VERB:-check -design $design}
tags=${TAGS:-}
tagflag=()
[ -n "$tags" ] && tagflag=(-tags "$tags")
std=$(go list -deps "${tagflag[@]}" -f '{{if .Standard}}{{.ImportPath}}{{end}}' ./cmd/explore)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOMODCACHE=$tmp/mod GOCACHE=$tmp/cache GOFLAGS=-modcacherw
if [ -n "${WARM_STD:-}" ]; then
	# shellcheck disable=SC2086
	go build $std
	echo "(the standard library's $(echo "$std" | wc -w) packages that the command uses compiled first, not timed)"
fi
echo "go run ${tagflag[*]} ./cmd/explore $verb   (empty GOMODCACHE and GOCACHE in $tmp)"
set +e
# shellcheck disable=SC2086
/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" go run "${tagflag[@]}" ./cmd/explore $verb >"$tmp/out" 2>"$tmp/err"
code=$?
set -e
read -r wall user sys rss < <(tail -1 "$tmp/time")
echo "go run exit $code (go run turns a verdict's non-zero code into 1); first line: $(head -1 "$tmp/out")"
bytes=$(du -sb "$tmp/mod/cache/download" 2>/dev/null | cut -f1)
zips=$(find "$tmp/mod/cache/download" -name '*.zip' 2>/dev/null | wc -l)
echo "wall ${wall} s, cpu $(echo "$user + $sys" | bc) s, peak RSS $((rss / 1024)) MB"
echo "downloaded: $((${bytes:-0} / 1024)) KiB in the module cache's download folder, $zips module zips:"
find "$tmp/mod/cache/download" -name '*.zip' 2>/dev/null | sed "s|$tmp/mod/cache/download/||; s|/@v/| |; s|\.zip$||" | sort | sed 's/^/  /'
