#!/usr/bin/env bash
# bench-pipe.sh: what a pipeline costs against one tool doing the same job
# (issue 14), on the bench archive of scripts/bench.sh.
#
#   scripts/bench-pipe.sh            the 1 GiB archive (bench/data/big-v2)
#   scripts/bench-pipe.sh --small    the 64 MiB one (bench/data/small-v2)
#   scripts/bench-pipe.sh --runs 5   5 runs of each side (default 3)
#
# Three comparisons, each side run in turn (A B A B ...), after one warm-up
# run of each, under GNU time:
#   copy:     pcpcat A -o B                 vs  pcpcat A | pcpcat -o B
#   rewrite:  pcprewrite -c ten.conf A -o B vs  pcpcat A | pcprewrite -c ten.conf | pcpextract -o B
#   vs PCP:   pmlogextract A T; pmlogrewrite -c ten.conf T B  vs  the same pipe
# For each side: median wall seconds, median CPU seconds (user+system, all
# processes), the largest peak RSS of any one process; for each
# comparison the median of the ratios of the pairs of runs (a pair meets
# the same moment of a loaded machine). Outputs go to bench/data/out-pipe
# and are removed after each run. Binaries come from ./bin (make build),
# or BENCH_BIN=dir.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
runs=3
small=0
while [ $# -gt 0 ]; do
	case "$1" in
	--small) small=1 ;;
	--runs) runs=$2; shift ;;
	-h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench-pipe.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
BIN=${BENCH_BIN:-$ROOT/bin}
DATA=$ROOT/bench/data
GEN=$ROOT/scripts/gen-bench-archive.py
if [ "$small" = 1 ]; then
	A=$DATA/small-v2
	gen=(-s 64M --name small-v2)
else
	A=$DATA/big-v2
	gen=(-s 1G --name big-v2)
fi
if [ ! -e "$A.meta" ]; then
	echo "generating $A ..." >&2
	/usr/bin/python3 "$GEN" "${gen[@]}" "$DATA" >&2
fi
TEN=$ROOT/scripts/bench/ten.conf
OUT=$DATA/out-pipe
mkdir -p "$OUT"
cat "$A".* >/dev/null # warm page cache

# measure CMD: prints "wall cpu maxrss_kb" of one run.
measure() {
	rm -rf "${OUT:?}"/*
	sync
	local f
	f=$(mktemp)
	/usr/bin/time -f '%e %U %S %M' -o "$f" bash -o pipefail -c "$1" >/dev/null
	awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$f"
	rm -f "$f"
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }

# pair NAME CMD_A CMD_B: ratio reported as B/A.
pair() {
	local name=$1 ca=$2 cb=$3 i wa wb
	measure "$ca" >/dev/null
	measure "$cb" >/dev/null
	: >"$OUT.a"
	: >"$OUT.b"
	: >"$OUT.r"
	for ((i = 0; i < runs; i++)); do
		wa=$(measure "$ca")
		wb=$(measure "$cb")
		echo "$wa" >>"$OUT.a"
		echo "$wb" >>"$OUT.b"
		awk -v a="${wa%% *}" -v b="${wb%% *}" 'BEGIN {printf "%.3f\n", b / a}' >>"$OUT.r"
	done
	printf '| %s | %s s / %s s CPU / %d MiB | %s s / %s s CPU / %d MiB | %s |\n' "$name" \
		"$(cut -d' ' -f1 "$OUT.a" | median)" "$(cut -d' ' -f2 "$OUT.a" | median)" "$(($(cut -d' ' -f3 "$OUT.a" | sort -n | tail -1) / 1024))" \
		"$(cut -d' ' -f1 "$OUT.b" | median)" "$(cut -d' ' -f2 "$OUT.b" | median)" "$(($(cut -d' ' -f3 "$OUT.b" | sort -n | tail -1) / 1024))" \
		"$(median <"$OUT.r")"
	rm -f "$OUT.a" "$OUT.b" "$OUT.r"
}

echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(du -shL "$A".* | awk '{s=s" "$1} END {print s}' | sed 's/^ //'); $runs runs; free page reporting order $(cat /sys/module/page_reporting/parameters/page_reporting_order 2>/dev/null || echo none) (bench.sh: page_reporting)"
echo
echo "| job | A: wall / CPU / peak RSS | B: wall / CPU / peak RSS | B/A (median of pairs) |"
echo "|---|---|---|---|"
pipe_rw="$BIN/pcpcat $A | $BIN/pcprewrite -c $TEN | $BIN/pcpextract --no-sync -o $OUT/x"
pair "copy: A = pcpcat -o, B = pcpcat | pcpcat -o" \
	"$BIN/pcpcat --no-sync $A -o $OUT/x" "$BIN/pcpcat $A | $BIN/pcpcat --no-sync -o $OUT/x"
pair "rewrite: A = pcprewrite -o, B = pcpcat | pcprewrite | pcpextract -o" \
	"$BIN/pcprewrite --no-sync -c $TEN $A -o $OUT/x" "$pipe_rw"
pair "vs PCP: A = pmlogextract + pmlogrewrite, B = the pipe" \
	"pmlogextract $A $OUT/t && /usr/lib/pcp/bin/pmlogrewrite -c $TEN $OUT/t $OUT/x" "$pipe_rw"
rm -rf "$OUT"
