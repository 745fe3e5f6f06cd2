#!/bin/bash
# Benchmark of pcpimport against PCP's importers on the same input, in one
# run, with throughput in rows and values per second:
#
#   CSV, ROWS rows x 100 columns (default 1,000,000):
#     pcpimport --csv (compact columns), pcpimport --map (a sheet2pcp mapfile),
#     sheet2pcp (Perl) and pcp.pmi (Python, /usr/bin/python3) on the first
#     PCPROWS rows (default 20,000: they are far slower; their rates are
#     per row, so they compare).
#   JSON lines of the 1 GiB bench archive (bench/data/big-v2, made by
#     scripts/bench.sh): pcpcat --json A > file, then pcpimport --json file.
#
#   scripts/bench-import.sh [ROWS [PCPROWS]]
#
# Needs GNU time, sheet2pcp and python3-pcp. Outputs go to a temporary
# directory, removed at the end.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROWS=${1:-1000000}
PCPROWS=${2:-20000}
COLS=100
BIN=${BENCH_BIN:-$ROOT/bin}
BIG=$ROOT/bench/data/big-v2
W=$(mktemp -d /tmp/bench-import.XXXXXX)
trap 'rm -rf "$W"' EXIT
[ -x "$BIN/pcpimport" ] || (cd "$ROOT" && go build -o "$BIN/" ./cmd/pcpimport ./cmd/pcpcat)

grep -m1 'model name' /proc/cpuinfo || true

# The CSV: a time, then COLS numeric columns (metric m.cK, as doubles).
/usr/bin/python3 - "$W/in.csv" "$ROWS" "$COLS" <<'PY'
import sys
path, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "w") as f:
    f.write("time," + ",".join("c%d" % c for c in range(cols)) + "\n")
    base = 1700000000
    vals = ",".join(str(c * 1.5) for c in range(cols))
    for r in range(rows):
        s = base + r
        f.write("%d-%02d-%02d %02d:%02d:%02d,%s\n" % (2023, 11, 14 + s // 86400 - 19675, (s // 3600) % 24, (s // 60) % 60, s % 60, vals))
PY
head -n $((PCPROWS + 1)) "$W/in.csv" > "$W/small.csv"

{
	echo '<sheet heading="1" datefmt="YMD" hostname="bench">'
	for c in $(seq 0 $((COLS - 1))); do echo "<metric type=\"PM_TYPE_DOUBLE\">m.c$c</metric>"; done
	echo '<datetime></datetime>'
	for c in $(seq 0 $((COLS - 1))); do echo "<data>m.c$c</data>"; done
	echo '</sheet>'
} > "$W/map.xml"
SPEC=(-c time)
for c in $(seq 0 $((COLS - 1))); do SPEC+=(-c "m.c$c:DOUBLE"); done

cat > "$W/pmi.py" <<'PY'
import sys, calendar, time
from pcp import pmi
import cpmapi as c
csv, out = sys.argv[1], sys.argv[2]
log = pmi.pmiLogImport(out)
log.pmiSetHostname("bench"); log.pmiSetTimezone("UTC")
with open(csv) as f:
    head = f.readline().rstrip("\n").split(",")[1:]
    for n in head:
        log.pmiAddMetric("m." + n, c.PM_ID_NULL, c.PM_TYPE_DOUBLE, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, log.pmiUnits(0, 0, 0, 0, 0, 0))
    hs = [log.pmiGetHandle("m." + n, "") for n in head]
    for line in f:
        p = line.rstrip("\n").split(",")
        for h, v in zip(hs, p[1:]):
            log.pmiPutValueHandle(h, v)
        log.pmiWrite(calendar.timegm(time.strptime(p[0], "%Y-%m-%d %H:%M:%S")), 0)
log.pmiEnd()
PY

# measure NAME ROWS VALUES-PER-ROW COMMAND...
measure() {
	local name=$1 rows=$2 per=$3
	shift 3
	rm -rf "$W/out"*
	sync # no run pays for the write-back of the one before
	/usr/bin/time -f '%e %U %S %M' -o "$W/t" "$@" >/dev/null 2>"$W/err" || { echo "$name: failed: $(tail -3 "$W/err")"; return; }
	read -r el us sy mem < "$W/t"
	awk -v n="$name" -v r="$rows" -v p="$per" -v e="$el" -v u="$us" -v s="$sy" -v m="$mem" 'BEGIN {
		if (e < 0.01) e = 0.01
		c = u + s; if (c < 0.01) c = 0.01
		printf "%-34s %9d rows %8.2f s (cpu %7.2f s)  %9.0f rows/s %11.0f values/s (per cpu-s: %11.0f)  %6.0f MiB\n", n, r, e, c, r / e, r * p / e, r * p / c, m / 1024 }'
}

echo "== CSV, $COLS value columns"
measure "pcpimport --csv" "$ROWS" $COLS "$BIN/pcpimport" --csv --heading 1 "${SPEC[@]}" --no-sync -o "$W/out1" "$W/in.csv"
measure "pcpimport --map" "$ROWS" $COLS "$BIN/pcpimport" --map "$W/map.xml" --no-sync -o "$W/out2" "$W/in.csv"
measure "pcpimport --map (first $PCPROWS)" "$PCPROWS" $COLS "$BIN/pcpimport" --map "$W/map.xml" --no-sync -o "$W/out3" "$W/small.csv"
measure "sheet2pcp (first $PCPROWS)" "$PCPROWS" $COLS sheet2pcp "$W/small.csv" "$W/map.xml" "$W/out4"
measure "pcp.pmi python (first $PCPROWS)" "$PCPROWS" $COLS /usr/bin/python3 "$W/pmi.py" "$W/small.csv" "$W/out5"

if [ -e "$BIG.meta" ]; then
	echo "== JSON lines of $(basename "$BIG")"
	measure "pcpcat --json (writing)" 1 1 sh -c "\"$BIN/pcpcat\" --json \"$BIG\" > \"$W/big.jsonl\""
	lines=$(wc -l < "$W/big.jsonl")
	measure "pcpimport --json" "$lines" 1 "$BIN/pcpimport" --json --no-sync -o "$W/outj" "$W/big.jsonl"
else
	echo "(no $BIG: run scripts/bench.sh once to make it)"
fi
