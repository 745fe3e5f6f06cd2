#!/usr/bin/env bash
# bench-export.sh: pcpexport (issue 19) against PCP's own exporters.
#
#   scripts/bench-export.sh [--small] [--window MINUTES]
#
# On the bench archive (bench/data/big-v2, 1 GiB, made by scripts/bench.sh;
# --small: bench/data/small-v2) it measures, one run each:
#   - pcpexport --parquet and pcpcat --csv over the whole archive: values
#     per second, peak memory, output size against the archive's and its
#     zstd's (zstd -3, as `zstd` makes it);
#   - pcp2csv and pcp2json (PCP 6.0.3) over the first MINUTES (default 10)
#     of the archive at the archive's 10 s interval: they are far too slow
#     for the whole of it, so their rate is values emitted per second of
#     their run;
#   - DuckDB's hourly mean of one metric over the Parquet file (the query
#     run three times; interop/duckdb's TestHourlyMeanQuery).
# Times are wall clock from /usr/bin/time; the machine may be shared.
set -euo pipefail
cd "$(dirname "$0")/.."
name=big-v2
window=10
while [ $# -gt 0 ]; do
	case $1 in
	--small) name=small-v2 ;;
	--window) window=$2; shift ;;
	*) echo "usage: $0 [--small] [--window MINUTES]" >&2; exit 2 ;;
	esac
	shift
done
A=bench/data/$name
if [ ! -e "$A.meta" ]; then
	echo "$A is missing: run scripts/bench.sh$([ $name = small-v2 ] && echo " --small") once to generate it" >&2
	exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/" ./cmd/pcpexport ./cmd/pcpcat

# timed OUT CMD...: runs CMD with its stdout to OUT; prints "wall maxrss_kB".
timed() {
	local out=$1; shift
	/usr/bin/time -f "%e %M" -o "$work/time" "$@" >"$out"
	cat "$work/time"
}
size() { stat -c %s "$@" | awk '{s += $1} END {print s}'; }

arch=$(size "$A".0* "$A".meta* "$A".index*)
zstd -q -3 -c "$A".0* "$A".meta* >"$work/archive.zst"
zarch=$(size "$work/archive.zst")

read -r pw pm <<<"$(timed /dev/null "$work/pcpexport" --parquet -o "$work/out.parquet" "$A")"
read -r cw cm <<<"$(timed "$work/out.csv" "$work/pcpcat" --csv "$A")"
values=$(($(wc -l <"$work/out.csv") - 1))
psize=$(size "$work/out.parquet")
csize=$(size "$work/out.csv")

export PCP_DERIVED_CONFIG= # the bench archive's names clash with PCP's derived metrics
metrics=$(pminfo -a "$A")
# pcp2* are python3-pcp scripts: run them with the system python.
read -r p2cw p2cm <<<"$(timed "$work/p2c.out" /usr/bin/python3 /usr/bin/pcp2csv -I -z -a "$A" -S @00:00:00 -T "@00:$(printf %02d "$window"):00" -t 10s $metrics)"
p2cvalues=$(awk -F, 'NR > 1 { for (i = 2; i <= NF; i++) if ($i != "") n++ } END { print n + 0 }' "$work/p2c.out")
read -r p2jw p2jm <<<"$(timed "$work/p2j.out" /usr/bin/python3 /usr/bin/pcp2json -I -z -a "$A" -S @00:00:00 -T "@00:$(printf %02d "$window"):00" -t 10s $metrics)"
p2jvalues=$(grep -o '"value"' "$work/p2j.out" | wc -l)

rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }'; }
echo "archive $A: $arch bytes, zstd -3 $zarch bytes, $values values"
printf '%-28s %10s %14s %12s %14s\n' tool "wall s" "values/s" "peak MB" "output bytes"
printf '%-28s %10s %14s %12d %14s\n' "pcpexport --parquet" "$pw" "$(rate "$values" "$pw")" $((pm / 1024)) "$psize"
printf '%-28s %10s %14s %12d %14s\n' "pcpcat --csv" "$cw" "$(rate "$values" "$cw")" $((cm / 1024)) "$csize"
printf '%-28s %10s %14s %12d %14s\n' "pcp2csv (${window} min)" "$p2cw" "$(rate "$p2cvalues" "$p2cw")" $((p2cm / 1024)) "$(size "$work/p2c.out")"
printf '%-28s %10s %14s %12d %14s\n' "pcp2json (${window} min)" "$p2jw" "$(rate "$p2jvalues" "$p2jw")" $((p2jm / 1024)) "$(size "$work/p2j.out")"
awk -v p="$psize" -v a="$arch" -v z="$zarch" 'BEGIN { printf "parquet/archive %.3f, parquet/zstd archive %.3f\n", p / a, p / z }'
metric=${PCPTOOLS_EXPORT_BENCH_METRIC:-$(awk -F, 'NR == 2 { print $2; exit }' "$work/out.csv")}
(cd interop/duckdb && PCPTOOLS_EXPORT_BENCH_PARQUET="$work/out.parquet" PCPTOOLS_EXPORT_BENCH_METRIC="$metric" \
	go test -count=1 -v -run TestHourlyMeanQuery . | grep 'hourly mean')
