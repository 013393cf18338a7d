#!/usr/bin/env bash
# How a run's cost grows with the design, and what a second core gives:
# `explore check` on the SPIN design (no-lost-update, symmetry) with 2 to 5
# clients, and on Redlock (3 clients, every property) with 3 to 5 nodes,
# each with -workers 1 and -workers 2. Prints a Markdown table: states,
# transitions, wall and cpu seconds (user + system), peak resident memory,
# and the speed-up of two workers (wall time of one over wall time of two).
#
#   bench/scaling.sh                 every row
#   ONLY=clients bench/scaling.sh    the SPIN design's rows only (ONLY=redlock: Redlock's)
#   CAP=600 bench/scaling.sh         stop a run after CAP seconds (default 900)
#
# Needs go, python3 and GNU time (/usr/bin/time). Nothing is written in the
# repo. CI does not run this script.
set -euo pipefail
for tool in go python3 /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "$0 needs $tool (GNU time: apt-get install -y time)" >&2; exit 1; }
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CAP=${CAP:-900}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
( cd "$ROOT" && go build -o "$TMP/explore" ./cmd/explore )

cat > "$TMP/row.py" <<'PY'
import json, re, sys
label = sys.argv[1]
res = []
for js, err in zip(sys.argv[2::2], sys.argv[3::2]):
    t = open(err).read()
    wall = float(re.findall(r"WALL ([\d.]+)", t)[-1])
    rss = int(re.findall(r"RSS (\d+)", t)[-1]) / 1024
    cpu = sum(float(x) for x in re.findall(r"CPU ([\d.]+) ([\d.]+)", t)[-1])
    try:
        st = json.load(open(js))["stats"]
    except Exception:
        st = None
    res.append((wall, cpu, rss, st))
(w1, c1, r1, s1), (w2, c2, r2, s2) = res
if s1 is None or s2 is None or not s1["complete"] or not s2["complete"]:
    print(f"| {label} | not finished in the cap | | | {w1:.1f} | {c1:.1f} | {w2:.1f} | {c2:.1f} | | |")
    sys.exit()
assert s1["distinct"] == s2["distinct"] and s1["transitions"] == s2["transitions"], "workers changed the counts"
print(f"| {label} | {s1['distinct']:,} | {s1['transitions']:,} | {s1['depth']} | {w1:.2f} | {c1:.2f} | {w2:.2f} | {c2:.2f} | "
      f"{w1 / w2:.2f}x | {max(r1, r2):,.0f} |")
PY

rows=()
run_pair() { # run_pair LABEL ARGS...: the same check with 1 and 2 workers
	local label=$1
	shift
	local files=()
	for w in 1 2; do
		/usr/bin/time -f 'WALL %e RSS %M CPU %U %S' timeout -s INT "$CAP" "$TMP/explore" check "$@" -workers "$w" -json \
			> "$TMP/w$w.json" 2> "$TMP/w$w.err" || true
		files+=("$TMP/w$w.json" "$TMP/w$w.err")
	done
	rows+=("$(python3 "$TMP/row.py" "$label" "${files[@]}")")
}
if [ "${ONLY:-clients}" = clients ] || [ -z "${ONLY:-}" ]; then
	for n in 2 3 4 5; do
		run_pair "SPIN design, $n clients, symmetry" -design "redis/cad/rw/max-token,clock=free,horizon=41,clients=$n" -properties no-lost-update
	done
fi
if [ "${ONLY:-redlock}" = redlock ] || [ -z "${ONLY:-}" ]; then
	for k in 3 4 5; do
		run_pair "Redlock, 3 clients, $k nodes, all properties" -design "redlock/cad/none/plain,nodes=$k"
	done
fi

echo "$(nproc) cores, $(date -u +%Y-%m-%d), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| run | distinct states | transitions | depth | wall s, 1 worker | cpu s, 1 worker | wall s, 2 workers | cpu s, 2 workers | speed-up | peak RSS MB |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
