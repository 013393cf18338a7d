#!/usr/bin/env bash
# Side by side: SPIN 6.5.2 on the Promela baseline and `explore check` on the
# same world (one Redis node, check-and-delete, token on reads and writes,
# max-token storage, TTL 10, W 2, one pause of 1..15 ticks, a clock that may
# tick at any moment, horizon 40 ticks), checking no-lost-update (it holds,
# so both search the whole space). Prints a Markdown table.
#
#   bench/spin_compare.sh            3 clients: SPIN, lockcheck with and without symmetry
#   CLIENTS=4 bench/spin_compare.sh  4 clients: lockcheck with symmetry only (SPIN needs
#                                    > 300 s and 7 GB: SPIN4=1 runs it anyway for CAP
#                                    seconds; NOSYM=1 adds lockcheck without symmetry:
#                                    about 2 minutes and 12 GB)
#   CLIENTS=5 bench/spin_compare.sh  5 clients: lockcheck with symmetry only
#   MORE=5 bench/spin_compare.sh     adds rows for the same design with 5 clients
#                                    (symmetry) to the 3-client run; MORE="4 5" both
#   REDLOCK=1 bench/spin_compare.sh  adds a row: `explore check -design
#                                    redlock/cad/none/plain,clients=4`, all properties
#                                    (121 M states; there is no SPIN model of Redlock)
#   FRONTIER=1 bench/spin_compare.sh adds the lockcheck rows again with -frontier-dir
#                                    (the frontiers in a file in a temporary folder)
#   BITSTATE=1 bench/spin_compare.sh adds bitstate rows (-bitstate -bits BITS, default
#                                    32): the SPIN design, and Redlock if REDLOCK=1
#
# Needs spin, gcc, go, python3 and GNU time (/usr/bin/time). The Promela model
# is read from SPIN_DIR (default: ../shared/baselines/spin next to the repo)
# and copied to a temporary folder; nothing is written in the repo.
set -euo pipefail
for tool in go python3 /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "$0 needs $tool (GNU time: apt-get install -y time)" >&2; exit 1; }
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SPIN_DIR=${SPIN_DIR:-$ROOT/../shared/baselines/spin}
CLIENTS=${CLIENTS:-3}
CAP=${CAP:-300}
WORKERS=${WORKERS:-0}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# design_for N: the SPIN design with N clients (3 is the default)
design_for() {
	local d="redis/cad/rw/max-token,clock=free,horizon=41"
	[ "$1" = 3 ] || d="$d,clients=$1"
	echo "$d"
}
DESIGN=$(design_for "$CLIENTS")

rows=()
if [ "$CLIENTS" = 3 ] || [ "${SPIN4:-}" = 1 ]; then
	command -v spin >/dev/null || { echo "install spin: apt-get install -y spin" >&2; exit 1; }
	command -v gcc >/dev/null || { echo "install gcc: apt-get install -y gcc" >&2; exit 1; }
	[ -f "$SPIN_DIR/lock.pml" ] || { echo "no Promela model at $SPIN_DIR/lock.pml: set SPIN_DIR to the folder of lock.pml (the team's shared/baselines/spin), or run CLIENTS=4 $0 for lockcheck alone" >&2; exit 1; }
	cp "$SPIN_DIR/lock.pml" "$TMP/"
	declare -A W=([2]=22 [3]=25 [4]=28)
	( cd "$TMP" && spin -DN="$CLIENTS" -DRELEASE=CAD -DFENCE=RW -DNO_EXCL -a lock.pml >/dev/null &&
		gcc -w -O2 -DSAFETY -DMEMLIM=16000 -o pan pan.c )
	( cd "$TMP" && /usr/bin/time -f 'WALL %e RSS %M' timeout -s INT "$CAP" ./pan -w"${W[$CLIENTS]}" -c0 ) > "$TMP/spin.out" 2>&1 || true
	rows+=("$(python3 - "$TMP/spin.out" "$CLIENTS" <<'EOF'
import re, sys
t = open(sys.argv[1], errors="replace").read()
g = lambda p: (re.findall(p, t) or ["-"])[-1]
stored, trans = float(g(r"([\d.e+]+) states, stored")), float(g(r"([\d.e+]+) transitions \(="))
secs, wall, rss = float(g(r"elapsed time ([\d.e+]+) seconds")), float(g(r"WALL ([\d.]+)")), int(g(r"RSS (\d+)")) / 1024
verdict = "holds" if "errors: 0" in t and "Interrupted" not in t else "not finished" if "Interrupted" in t else "violated"
open(sys.argv[1] + ".wall", "w").write(f"{wall}")
print(f"| SPIN 6.5.2, {sys.argv[2]} clients, no symmetry | {verdict} | {stored:,.0f} | {trans:,.0f} | {wall:.2f} | {stored/secs/1e6:.2f} M | {rss:,.0f} | {rss*2**20/stored:.0f} |")
EOF
)")
fi

( cd "$ROOT" && go build -o "$TMP/explore" ./cmd/explore )
syms="true false"
[ "$CLIENTS" = 3 ] || [ "${NOSYM:-}" = 1 ] || syms=true
mkdir "$TMP/frontier"
modes=("")
[ "${FRONTIER:-}" = 1 ] && modes+=("-frontier-dir=$TMP/frontier")
[ "${BITSTATE:-}" = 1 ] && modes+=("-bitstate -bits=${BITS:-32}")
runs=()
for sym in $syms; do runs+=("$CLIENTS:$sym"); done
if [ "$CLIENTS" = 3 ]; then
	for n in ${MORE:-}; do runs+=("$n:true"); done
fi
for mode in "${modes[@]}"; do
for run in "${runs[@]}"; do
	n=${run%%:*} sym=${run#*:}
	design=$(design_for "$n")
	# shellcheck disable=SC2086 # $mode is zero or more flags
	/usr/bin/time -f 'WALL %e RSS %M' "$TMP/explore" check -design "$design" -properties no-lost-update \
		-symmetry="$sym" -workers "$WORKERS" $mode -json > "$TMP/lc.json" 2> "$TMP/lc.err" || true
	rows+=("$(python3 - "$TMP/lc.json" "$TMP/lc.err" "$sym" "$mode" "$n" "$TMP/spin.out.wall" <<'EOF'
import json, os, re, sys
j = json.load(open(sys.argv[1]))
err = open(sys.argv[2]).read()
wall, rss = float(re.findall(r"WALL ([\d.]+)", err)[-1]), int(re.findall(r"RSS (\d+)", err)[-1]) / 1024
st = j["stats"]
sym = "symmetry" if sys.argv[3] == "true" else "no symmetry"
if sys.argv[4]:
    sym += ", " + re.sub(r"=/\S+", "", sys.argv[4])
ratio = ""
if sys.argv[5] == "3" and os.path.exists(sys.argv[6]):
    ratio = f" ({float(open(sys.argv[6]).read()) / wall:.1f}x faster than SPIN)"
print(f"| lockcheck, {sys.argv[5]} clients, {sym} | {j['results'][0]['status']} | {st['distinct']:,} | {st['transitions']:,} | {wall:.2f}{ratio} | "
      f"{st['distinct']/st['seconds']/1e6:.2f} M | {rss:,.0f} | {st['bytes_per_state']:.1f} tables, {rss*2**20/st['distinct']:.0f} resident |")
EOF
)")
done
done

if [ "${REDLOCK:-}" = 1 ]; then
	RDESIGN="redlock/cad/none/plain,clients=4"
	for mode in "${modes[@]}"; do
	# shellcheck disable=SC2086 # $mode is zero or more flags
	/usr/bin/time -f 'WALL %e RSS %M' "$TMP/explore" check -design "$RDESIGN" \
		-workers "$WORKERS" $mode -json > "$TMP/rl.json" 2> "$TMP/rl.err" || true
	rows+=("$(python3 - "$TMP/rl.json" "$TMP/rl.err" "$RDESIGN" "$mode" <<'EOF'
import json, re, sys
j = json.load(open(sys.argv[1]))
err = open(sys.argv[2]).read()
wall, rss = float(re.findall(r"WALL ([\d.]+)", err)[-1]), int(re.findall(r"RSS (\d+)", err)[-1]) / 1024
st = j["stats"]
verdicts = ", ".join(sorted({r["status"] for r in j["results"]}))
mode = ", " + re.sub(r"=/\S+", "", sys.argv[4]) if sys.argv[4] else ""
print(f"| lockcheck, {sys.argv[3]}, all properties{mode} | {verdicts} | {st['distinct']:,} | {st['transitions']:,} | {wall:.2f} | "
      f"{st['distinct']/st['seconds']/1e6:.2f} M | {rss:,.0f} | {st['bytes_per_state']:.1f} tables, {rss*2**20/st['distinct']:.0f} resident |")
EOF
)")
	done
fi

echo "design $DESIGN, property no-lost-update, $(nproc) cores, $(date -u +%Y-%m-%d), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| run | verdict | distinct states | transitions | wall s | states/s | peak RSS MB | bytes/state |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
