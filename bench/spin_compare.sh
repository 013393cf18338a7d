#!/usr/bin/env bash
# Side by side: SPIN 6.5.2 on the Promela baseline and `explore check` on the
# same world (one Redis node, check-and-delete, token on reads and writes,
# max-token storage, TTL 10, W 2, one pause of 1..15 ticks, a clock that may
# tick at any moment, horizon 40 ticks), checking no-lost-update (it holds,
# so both search the whole space). Prints a Markdown table. SPIN runs three
# ways: on one core, with -DNCORE=2 (the two cores lockcheck's workers use),
# and -DBITSTATE; every exact lockcheck row's ratio is against SPIN's
# fastest exact run of the same run of this script, and a bitstate row's
# against SPIN's bitstate run. cpu s is user + system time, steadier than
# wall time on a shared machine. bench/README.md holds the figures.
#
#   bench/spin_compare.sh            3 clients: SPIN (one core, NCORE=2, bitstate),
#                                    lockcheck with and without symmetry
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
#   BITSTATE=1 bench/spin_compare.sh adds lockcheck bitstate rows (-bitstate -bits BITS,
#                                    default 32): the SPIN design, and Redlock if REDLOCK=1
#   SPIN_BITS=N                      SPIN's bitstate array: 2^N bits (default 32)
#
# Needs spin (apt-get install -y spin), gcc, go, python3 and GNU time
# (/usr/bin/time). The Promela model is read from SPIN_DIR (default:
# ../shared/baselines/spin next to the repo) and copied to a temporary
# folder; nothing is written in the repo. CI does not run this script.
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
TIMEFMT='WALL %e RSS %M CPU %U %S'

# row.py KIND ARGS: one table row from a run's output (spin or lockcheck)
cat > "$TMP/row.py" <<'PY'
import json, os, re, sys
kind = sys.argv[1]
def timing(text):
    wall = float(re.findall(r"WALL ([\d.]+)", text)[-1])
    rss = int(re.findall(r"RSS (\d+)", text)[-1]) / 1024
    cpu = sum(float(x) for x in re.findall(r"CPU ([\d.]+) ([\d.]+)", text)[-1])
    return wall, rss, cpu
if kind == "spin":
    out, clients, label = sys.argv[2:5]
    t = open(out, errors="replace").read()
    g = lambda p: (re.findall(p, t) or ["0"])[-1]
    stored, trans = float(g(r"([\d.e+]+) states, stored")), float(g(r"([\d.e+]+) transitions \(="))
    if "NCORE" in label:
        # each core reports its own counts: the totals are their sums
        stored = sum(float(x) for x in re.findall(r"([\d.e+]+) states, stored", t)) or stored
        trans = sum(float(x) for x in re.findall(r"([\d.e+]+) transitions \(=", t)) or trans
    wall, rss, cpu = timing(t)
    verdict = "not finished" if "Interrupted" in t else "holds" if "errors: 0" in t else "violated"
    if "BITSTATE" in label and verdict == "holds":
        verdict = "holds (probabilistic)"
    open(out + ".wall", "w").write(f"{wall}")
    print(f"| SPIN 6.5.2, {clients} clients, {label} | {verdict} | {stored:,.0f} | {trans:,.0f} | {wall:.2f} | {cpu:.2f} | "
          f"{stored/max(wall, 1e-9)/1e6:.2f} M | {rss:,.0f} | {rss*2**20/max(stored, 1):.0f} |")
    sys.exit()
js, errf, label, clients, base = sys.argv[2:7]
j = json.load(open(js))
wall, rss, cpu = timing(open(errf).read())
st = j["stats"]
ratio = ""
if base and os.path.exists(base):
    which = "SPIN's bitstate" if "bitstate" in label else "SPIN's fastest"
    ratio = f" ({float(open(base).read()) / wall:.1f}x {which})"
verdicts = ", ".join(sorted({r["status"] for r in j["results"]}))
print(f"| lockcheck, {clients}, {label} | {verdicts} | {st['distinct']:,} | {st['transitions']:,} | {wall:.2f}{ratio} | {cpu:.2f} | "
      f"{st['distinct']/max(wall, 1e-9)/1e6:.2f} M | {rss:,.0f} | {st['bytes_per_state']:.1f} tables, {rss*2**20/st['distinct']:.0f} resident |")
PY

rows=()
if [ "$CLIENTS" = 3 ] || [ "${SPIN4:-}" = 1 ]; then
	command -v spin >/dev/null || { echo "install spin: apt-get install -y spin" >&2; exit 1; }
	command -v gcc >/dev/null || { echo "install gcc: apt-get install -y gcc" >&2; exit 1; }
	[ -f "$SPIN_DIR/lock.pml" ] || { echo "no Promela model at $SPIN_DIR/lock.pml: set SPIN_DIR to the folder of lock.pml (the team's shared/baselines/spin), or run CLIENTS=4 $0 for lockcheck alone" >&2; exit 1; }
	cp "$SPIN_DIR/lock.pml" "$TMP/"
	declare -A W=([2]=22 [3]=25 [4]=28)
	( cd "$TMP" && spin -DN="$CLIENTS" -DRELEASE=CAD -DFENCE=RW -DNO_EXCL -a lock.pml >/dev/null &&
		gcc -w -O2 -DSAFETY -DMEMLIM=16000 -o pan pan.c &&
		gcc -w -O2 -DSAFETY -DMEMLIM=16000 -DNCORE=2 -o pan-ncore pan.c &&
		gcc -w -O2 -DSAFETY -DBITSTATE -o pan-bits pan.c )
	# spin_row OUT BINARY LABEL FLAGS...: one SPIN run and its row
	spin_row() {
		local out=$1 bin=$2 label=$3
		shift 3
		( cd "$TMP" && /usr/bin/time -f "$TIMEFMT" timeout -s INT "$CAP" "./$bin" "$@" ) > "$TMP/$out" 2>&1 || true
		rows+=("$(python3 "$TMP/row.py" spin "$TMP/$out" "$CLIENTS" "$label")")
	}
	spin_row spin.out pan "one core, no symmetry" -w"${W[$CLIENTS]}" -c0
	spin_row spin-ncore.out pan-ncore "-DNCORE=2, no symmetry" -w"${W[$CLIENTS]}" -c0
	spin_row spin-bits.out pan-bits "-DBITSTATE (2^${SPIN_BITS:-32} bits), no symmetry" -w"${SPIN_BITS:-32}" -c0
	# lockcheck's exact rows are compared with SPIN's fastest exact run
	python3 -c 'import sys; print(min(float(open(f).read()) for f in sys.argv[1:]))' \
		"$TMP/spin.out.wall" "$TMP/spin-ncore.out.wall" > "$TMP/spin.best"
	cp "$TMP/spin-bits.out.wall" "$TMP/spin.bits"
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
	/usr/bin/time -f "$TIMEFMT" "$TMP/explore" check -design "$design" -properties no-lost-update \
		-symmetry="$sym" -workers "$WORKERS" $mode -json > "$TMP/lc.json" 2> "$TMP/lc.err" || true
	label="symmetry"
	[ "$sym" = true ] || label="no symmetry"
	[ -z "$mode" ] || label="$label, $(echo "$mode" | sed 's|=/[^ ]*||')"
	base=""
	if [ "$n" = 3 ]; then
		base="$TMP/spin.best"
		case "$mode" in -bitstate*) base="$TMP/spin.bits" ;; esac
	fi
	rows+=("$(python3 "$TMP/row.py" lockcheck "$TMP/lc.json" "$TMP/lc.err" "$label" "$n clients" "$base")")
done
done

if [ "${REDLOCK:-}" = 1 ]; then
	RDESIGN="redlock/cad/none/plain,clients=4"
	for mode in "${modes[@]}"; do
	# shellcheck disable=SC2086 # $mode is zero or more flags
	/usr/bin/time -f "$TIMEFMT" "$TMP/explore" check -design "$RDESIGN" \
		-workers "$WORKERS" $mode -json > "$TMP/rl.json" 2> "$TMP/rl.err" || true
	label="all properties"
	[ -z "$mode" ] || label="$label, $(echo "$mode" | sed 's|=/[^ ]*||')"
	rows+=("$(python3 "$TMP/row.py" lockcheck "$TMP/rl.json" "$TMP/rl.err" "$label" "$RDESIGN" "")")
	done
fi

echo "design $DESIGN, property no-lost-update, $(nproc) cores, $(date -u +%Y-%m-%d), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| run | verdict | distinct states | transitions | wall s | cpu s | states/s (wall) | peak RSS MB | bytes/state |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
