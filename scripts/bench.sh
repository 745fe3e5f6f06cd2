#!/usr/bin/env bash
# bench.sh: time PCP's own tools and ours on the same archives, in one run,
# and print a markdown table (wall time, peak RSS, throughput, ratios).
#
#   scripts/bench.sh               1 GiB archive + 24 hourly archives (~470 MiB)
#   scripts/bench.sh --small       64 MiB archive + 4 hourly archives: a quick check
#   scripts/bench.sh --record      also write the table to docs/benchmarks.md,
#                                  as the section of this host's CPU model
#   scripts/bench.sh --runs 3      3 runs per command, the sides taking turns:
#                                  the best shown, and the median of the
#                                  ratios of the pairs of runs
#   scripts/bench.sh --only copy   only the rows whose name contains "copy"
#                                  (--only xz: the rows on xz-compressed inputs)
#
# The archives are generated on first use by scripts/gen-bench-archive.py
# into bench/data/ (git ignores it; takes a few minutes for the full set).
# The xz rows read copies of them compressed as pmlogger_daily (PCP 6.0.3)
# compresses archives: `xz -0 --block-size=10MiB` on the volumes and the
# .meta (made on first use, next to the originals, with -xz added to the
# name).
# Our side runs the tools in ./bin, which the script builds from the tree
# first (BENCH_BIN=dir to time other builds, as they are); a row whose
# binary is not there shows PCP alone.
#
# Method: every command runs under GNU time (/usr/bin/time: wall seconds,
# user+system CPU seconds, peak RSS) via `bash -c`, after the inputs have been read
# once, so both sides see a warm page cache: this measures the tools, not
# the disk. CPU time is shown beside wall time because it is the steadier of
# the two on a busy machine; speedups are computed from wall time, of the
# best runs and as the median of the ratios of the pairs of runs made one
# after the other (on a shared machine whose speed comes and goes, the best
# run of the side with the wider spread gains most from a lucky moment; a
# pair meets the same moment). Each run starts after a sync, so that none pays for the
# write-back of another. Outputs go to bench/data/out/ (BENCH_OUT=dir for
# another, say when two people share a work tree) and are deleted after
# each run.
# Throughput is the size of the input files divided by the wall time.
#
# Adding a comparison: one `compare` line in the ROWS section below.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)

record=0
small=0
runs=1
only=""
while [ $# -gt 0 ]; do
	case "$1" in
	--record) record=1 ;;
	--small) small=1 ;;
	--runs) runs=$2; shift ;;
	--only) only=$2; shift ;;
	-h | --help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done

if [ ! -x /usr/bin/time ]; then
	echo "bench.sh: needs GNU time in /usr/bin/time (scripts/install-deps.sh installs it)" >&2
	exit 1
fi
# shellcheck disable=SC1091 # installed by PCP
. /etc/pcp.conf
PMLOGEXTRACT=$PCP_BINADM_DIR/pmlogextract
PMDUMPLOG=$PCP_BIN_DIR/pmdumplog
BIN=${BENCH_BIN:-$ROOT/bin}
if [ -z "${BENCH_BIN:-}" ]; then
	# Measure the tree as it is: a ./bin left from an earlier build would
	# be timed under the new code's name.
	echo "bench.sh: building ./bin" >&2
	(cd "$ROOT" && mkdir -p bin && go build -tags urfave_cli_no_docs -o bin/ ./cmd/...) || exit 1
fi

DATA=$ROOT/bench/data
OUT=${BENCH_OUT:-$DATA/out}
GEN=$ROOT/scripts/gen-bench-archive.py
if [ "$small" = 1 ]; then
	BIG=$DATA/small-v2
	HOURLY=$DATA/hourly-small-v2
	gen_big=(-s 64M --name small-v2)
	gen_hourly=(--hourly -n 4 -s 40M --name hourly-small-v2)
else
	BIG=$DATA/big-v2
	HOURLY=$DATA/hourly-v2
	gen_big=(-s 1G --name big-v2)
	gen_hourly=(--hourly -n 24 -s 470M --name hourly-v2)
fi

mkdir -p "$DATA"
if [ ! -e "$BIG.meta" ]; then
	/usr/bin/python3 "$GEN" "${gen_big[@]}" "$DATA"
fi
if [ ! -d "$HOURLY" ]; then
	/usr/bin/python3 "$GEN" "${gen_hourly[@]}" "$DATA"
fi
HOURLY_BASES=$(for m in "$HOURLY"/*.meta; do printf '%s ' "${m%.meta}"; done)

# xz copies, as pmlogger_daily leaves archives: volumes and .meta through
# `xz -0 --block-size=10MiB` (its default; the .index stays plain), two
# files at a time.
xz_copy() {
	local from=$1 to=$2
	if [ -d "$to" ]; then
		return 0
	fi
	rm -rf "$to.tmp" && mkdir -p "$to.tmp"
	cp "$from"/* "$to.tmp"/
	find "$to.tmp" -type f \( -name '*.meta' -o -regex '.*\.[0-9]+' \) -print0 |
		xargs -0 -P 2 -n 1 xz -0 --block-size=10MiB
	mv "$to.tmp" "$to"
}
if [ ! -d "$BIG-xz" ]; then
	mkdir -p "$BIG-xz.src" && ln -f "$BIG".meta "$BIG".index "$BIG".[0-9]* "$BIG-xz.src"/
	xz_copy "$BIG-xz.src" "$BIG-xz" && rm -rf "$BIG-xz.src"
fi
xz_copy "$HOURLY" "$HOURLY-xz"
BIGXZ=$BIG-xz/$(basename "$BIG")
HOURLYXZ_BASES=$(for m in "$HOURLY-xz"/*.meta.xz; do if [ -e "$m" ]; then printf '%s ' "${m%.meta.xz}"; fi; done)

# A farm of 8 hosts (pmlogger_farm's layout, a folder per host), each with
# three of the hourly archives under its own host name.
FARM=$HOURLY-farm
if [ ! -d "$FARM" ]; then
	PMLOGREWRITE=$PCP_BINADM_DIR/pmlogrewrite
	rm -rf "$FARM.tmp"
	i=0
	for b in $HOURLY_BASES; do
		h=host$((i % 8 + 1))
		mkdir -p "$FARM.tmp/$h"
		cfg=$(mktemp)
		echo "global { hostname -> $h }" >"$cfg"
		"$PMLOGREWRITE" -c "$cfg" "$b" "$FARM.tmp/$h/$(basename "$b")"
		rm -f "$cfg"
		i=$((i + 1))
	done
	mv "$FARM.tmp" "$FARM"
fi

# ---------------------------------------------------------------------------

# files_of BASE...: the files of these archives
files_of() {
	local b
	for b in "$@"; do
		ls "$b".meta "$b".meta.* "$b".index "$b".[0-9]* 2>/dev/null || true
	done
}

# bytes_of BASE...: their total size
bytes_of() {
	# shellcheck disable=SC2046 # one word per file is wanted
	du -cb $(files_of "$@") | tail -1 | cut -f1
}

# run_timed CMD: run CMD `runs` times, print "wall_s cpu_s peak_kib" of the
# fastest run, or "FAIL" after showing the end of the command's stderr.
run_timed() {
	local cmd=$1 best="" tf ef i secs usr sys kib
	tf=$(mktemp) ef=$(mktemp)
	for ((i = 0; i < runs; i++)); do
		rm -rf "$OUT" && mkdir -p "$OUT"
		# Start every run with nothing left for the disk to write: an
		# unsynced output of the run before would otherwise be written
		# back during this one, on this one's CPUs.
		sync
		if ! /usr/bin/time -f '%e %U %S %M' -o "$tf" bash -c "$cmd" 2>"$ef"; then
			echo "bench.sh: failed: $cmd" >&2
			tail -5 "$ef" >&2
			best=FAIL
			break
		fi
		read -r secs usr sys kib <"$tf"
		if [ -z "$best" ] || awk -v a="$secs" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
			best="$secs $(awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.2f", u + s }') $kib"
		fi
	done
	rm -rf "$OUT" "$tf" "$ef"
	echo "$best"
}

# best_of A B: the faster of two "wall cpu kib" results (FAIL wins).
best_of() {
	if [ -z "$1" ] || [ "$2" = FAIL ]; then
		echo "$2"
	elif [ "$1" = FAIL ] || [ -z "$2" ]; then
		echo "$1"
	elif awk -v a="${2%% *}" -v b="${1%% *}" 'BEGIN { exit !(a < b) }'; then
		echo "$2"
	else
		echo "$1"
	fi
}

ROWS=()
INPUT_BYTES=0
INPUT_DESC=""
INPUT_FILES=""

# input DESC BASE...: the archives the following rows read (warms the cache)
input() {
	INPUT_DESC=$1
	shift
	INPUT_BYTES=$(bytes_of "$@")
	INPUT_FILES=$(files_of "$@")
	warm
}

# warm reads the current input once more before a row: on the VMs this
# project runs on, the guest pages out memory left untouched for a minute
# (a DAMON scheme, /sys/kernel/mm/damon/admin/kdamonds: 144 GB paged out in
# 21 hours), so a warm page cache does not stay warm across rows by itself.
warm() {
	# shellcheck disable=SC2086
	[ -z "$INPUT_FILES" ] || cat $INPUT_FILES >/dev/null
}

# compare NAME "PCP command" "our command": one row of the table. An empty
# command, or one whose program (first word, a path) is not built yet, is
# skipped.
compare() {
	local name=$1 pcp=$2 ours=$3
	if [ -n "$only" ] && [[ $name != *"$only"* ]]; then
		return 0
	fi
	local pt="" ot="" first k r pws=() ows=()
	first=${ours%% *}
	if [ -n "$ours" ] && [[ $first == */* ]] && [ ! -x "$first" ]; then
		ours=""
	fi
	if [ -n "$pcp" ]; then echo "bench.sh: $name: PCP: $pcp" >&2; fi
	if [ -n "$ours" ]; then echo "bench.sh: $name: ours: $ours" >&2; fi
	warm
	# The two sides take turns, run by run, so that both meet the same
	# moments of a shared machine (another VM's load comes and goes).
	for ((k = 0; k < runs; k++)); do
		if [ -n "$pcp" ]; then
			r=$(runs=1 run_timed "$pcp")
			pt=$(best_of "$pt" "$r")
			pws+=("${r%% *}")
		fi
		if [ -n "$ours" ]; then
			r=$(runs=1 run_timed "$ours")
			ot=$(best_of "$ot" "$r")
			ows+=("${r%% *}")
		fi
	done
	# Every run's wall time, for auditing the medians (a table keeps
	# only the best runs and the median of the pair ratios).
	echo "bench.sh: $name: wall s, PCP: ${pws[*]:-–}; ours: ${ows[*]:-–}" >&2
	ROWS+=("$(format_row "$name" "$pt" "$ot" "$(pair_ratios "${#pws[@]}" "${pws[@]}" "${ows[@]}")")")
}

# pair_ratios N PCP_WALL... OUR_WALL...: the median of the N ratios PCP
# time / our time of the runs made one after the other (empty when a side
# did not run, FAIL if a run failed). A pair met the same moment of a
# shared machine; the median of the pairs is what the tables report.
pair_ratios() {
	local n=$1
	shift
	if [ "$n" -eq 0 ] || [ $# -ne $((2 * n)) ]; then
		return 0
	fi
	local p=("${@:1:n}") o=("${@:n+1:n}") r=() k
	for ((k = 0; k < n; k++)); do
		if [ "${p[k]}" = FAIL ] || [ "${o[k]}" = FAIL ]; then
			echo FAIL
			return 0
		fi
		r+=("$(awk -v a="${p[k]}" -v b="${o[k]}" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')")
	done
	median "${r[@]}"
}

# median WALL...: the median of some wall times (empty for none, FAIL if
# any failed)
median() {
	if [ $# -eq 0 ]; then
		return 0
	fi
	printf '%s\n' "$@" | sort -g | awk '/FAIL/ { failed = 1 } { v[NR] = $1 }
		END { print (failed ? "FAIL" : NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

# format_row NAME "wall cpu kib" "wall cpu kib" PAIR_MEDIAN: a markdown
# table row (the first two are the best runs; PAIR_MEDIAN is pair_ratios')
format_row() {
	awk -v name="$1" -v p="$2" -v o="$3" -v pr="$4" -v bytes="$INPUT_BYTES" -v desc="$INPUT_DESC" '
	function side(s, parts) {
		if (s == "") return "| – | – | – | – "
		if (s == "FAIL") return "| FAIL | – | – | – "
		split(s, parts, " ")
		return sprintf("| %.2f | %.2f | %.0f | %.0f ", parts[1], parts[2], parts[3] / 1024,
			parts[1] > 0 ? bytes / 1048576 / parts[1] : 0)
	}
	BEGIN {
		n = split(p, pp, " "); m = split(o, oo, " ")
		speed = "–"; mem = "–"; mspeed = "–"
		if (n == 3 && m == 3) {
			if (oo[1] > 0) speed = sprintf("%.2fx", pp[1] / oo[1])
			if (pp[3] > 0) mem = sprintf("%.2fx", oo[3] / pp[3])
			if (pr + 0 > 0) mspeed = sprintf("%.2fx", pr)
		}
		printf "| %s | %s | %.0f %s%s| %s | %s | %s |\n", name, desc, bytes / 1048576, side(p), side(o), speed, mspeed, mem
	}'
}

# ---------------------------------------------------------------------------
# ROWS. Each compare runs the PCP command, then ours, on the inputs set by
# the last `input` line. $OUT is an empty scratch directory for outputs.

BIGNAME=$(basename "$BIG")
input "$BIGNAME" "$BIG"
compare "cp (floor)" "cp $BIG.* $OUT/" ""
compare "cp + sync (floor)" "cp $BIG.* $OUT/ && sync" ""
# By default our tools fsync each output file before renaming it into
# place; pmlogextract and pmlogrewrite leave the data dirty in the page
# cache. Rows without "synced" compare like with like: ours with --no-sync.
# Rows with "synced" time both sides to disk: ours as shipped, PCP's
# followed by sync.
compare "copy" "$PMLOGEXTRACT $BIG $OUT/x" "$BIN/pcpcat --no-sync $BIG -o $OUT/x"
compare "copy, synced to disk" "$PMLOGEXTRACT $BIG $OUT/x && sync" "$BIN/pcpcat $BIG -o $OUT/x && sync"
compare "copy through a pipe" "" "$BIN/pcpcat $BIG | $BIN/pcpcat --no-sync -o $OUT/x"
compare "dump -a" "$PMDUMPLOG -a $BIG >/dev/null" "$BIN/pcpcat -a $BIG >/dev/null"

# A window out of the large archive: ten minutes in the middle.
WIN="-S @12:00 -T @12:10"
compare "window -S/-T (10 min)" "$PMLOGEXTRACT $WIN $BIG $OUT/x" "$BIN/pcpextract --no-sync $WIN $BIG -o $OUT/x"

# pcprewrite against pmlogrewrite: ten rules on the large archive (a
# rename, renumbers, rescales, retypes, a semantics change, an indom
# collapse, a delete). The same rules, in the rules language, for -r.
PMLOGREWRITE_BIN=$PCP_BINADM_DIR/pmlogrewrite
# (scripts/bench/ten.conf, and ten.rules for -r; rewrite's Go benchmark
# BenchmarkBigArchive uses ten.conf too.)
TEN=$ROOT/scripts/bench/ten.conf
TENR=$ROOT/scripts/bench/ten.rules
compare "rewrite (10 rules)" "$PMLOGREWRITE_BIN -c $TEN $BIG $OUT/x" "$BIN/pcprewrite --no-sync -c $TEN $BIG -o $OUT/x"
compare "rewrite (10 rules), synced to disk" "$PMLOGREWRITE_BIN -c $TEN $BIG $OUT/x && sync" "$BIN/pcprewrite -c $TEN $BIG -o $OUT/x && sync"
compare "rewrite (10 rules, -r)" "" "$BIN/pcprewrite --no-sync -r $TENR $BIG -o $OUT/x"
compare "rewrite through a pipe" "" "$BIN/pcpcat $BIG | $BIN/pcprewrite -c $TEN | $BIN/pcpcat --no-sync -o $OUT/x"

# pcpsummary against pmlogsummary (issue 12: the summary of every metric,
# into /dev/null), natively and under pmlogsummary's name (a symlink, as
# `make install-compat` makes one).
COMPAT=$DATA/compat
mkdir -p "$COMPAT"
ln -sf "$BIN/pcpsummary" "$COMPAT/pmlogsummary"
ln -sf "$BIN/pcpreduce" "$COMPAT/pmlogreduce"
PMLOGSUMMARY=$PCP_BIN_DIR/pmlogsummary
compare "summary" "$PMLOGSUMMARY $BIG >/dev/null" "$BIN/pcpsummary $BIG >/dev/null"
compare "summary (as pmlogsummary)" "$PMLOGSUMMARY $BIG >/dev/null" "$COMPAT/pmlogsummary $BIG >/dev/null"
# What pmlogsummary cannot give, against its plain run: JSON with the
# standard deviation, and percentiles on top (which should cost little).
compare "summary --json" "$PMLOGSUMMARY $BIG >/dev/null" "$BIN/pcpsummary --json $BIG >/dev/null"
compare "summary --json --percentiles 50,90,99" "$PMLOGSUMMARY $BIG >/dev/null" "$BIN/pcpsummary --json --percentiles 50,90,99 $BIG >/dev/null"
# pcpreduce against pmlogreduce -t 60 (issue 11): natively (interval
# statistics) and under pmlogreduce's name (its interpolated values). The
# compatible mode syncs as our tools do and takes no --no-sync (its command
# line is pmlogreduce's): that row is timed to disk on both sides.
PMLOGREDUCE=$PCP_BINADM_DIR/pmlogreduce
compare "reduce -t 60" "$PMLOGREDUCE -t 60 $BIG $OUT/x" "$BIN/pcpreduce --no-sync -t 60 $BIG -o $OUT/x"
compare "reduce -t 60 (as pmlogreduce), synced to disk" "$PMLOGREDUCE -t 60 $BIG $OUT/x && sync" "$COMPAT/pmlogreduce -t 60 $BIG $OUT/x && sync"

# The reductions' sizes (issue 11 asks for them beside the times): each
# output's bytes and the input's bytes over them, for pcpreduce at -t 60
# and -t 1h and pmlogreduce at -t 60 (one run each, not timed).
SIZES=()
reduce_sizes() {
	if [ -n "$only" ] && [[ "reduce -t 60" != *"$only"* ]]; then
		return 0
	fi
	local d in_b t b
	d=$(mktemp -d)
	in_b=$(bytes_of "$BIG")
	for t in 60 1h; do
		if "$BIN/pcpreduce" --no-sync -t "$t" "$BIG" -o "$d/o$t" >/dev/null 2>&1; then
			b=$(bytes_of "$d/o$t")
			SIZES+=("| pcpreduce -t $t | $in_b | $b | $(awk -v i="$in_b" -v o="$b" 'BEGIN { printf "%.2f", i / o }') |")
		fi
	done
	if "$PMLOGREDUCE" -t 60 "$BIG" "$d/p60" >/dev/null 2>&1; then
		b=$(bytes_of "$d/p60")
		SIZES+=("| pmlogreduce -t 60 | $in_b | $b | $(awk -v i="$in_b" -v o="$b" 'BEGIN { printf "%.2f", i / o }') |")
	fi
	rm -rf "$d"
}
reduce_sizes

# shellcheck disable=SC2086 # HOURLY_BASES is a list
input "$(basename "$HOURLY") ($(echo $HOURLY_BASES | wc -w) archives)" $HOURLY_BASES
compare "cp (floor)" "cp $HOURLY/* $OUT/" ""
compare "cp + sync (floor)" "cp $HOURLY/* $OUT/ && sync" ""
compare "merge" "$PMLOGEXTRACT $HOURLY_BASES $OUT/x" "$BIN/pcpextract --no-sync $HOURLY_BASES -o $OUT/x"
compare "merge, synced to disk" "$PMLOGEXTRACT $HOURLY_BASES $OUT/x && sync" "$BIN/pcpextract $HOURLY_BASES -o $OUT/x && sync"
# pcpcat concatenates archives that follow each other in time, with
# libpcp's multi-archive rules rather than pmlogextract's.
compare "concatenate (pcpcat)" "" "$BIN/pcpcat --no-sync $HOURLY_BASES -o $OUT/x"

# shellcheck disable=SC2046 # one word per archive
input "$(basename "$FARM") (8 hosts x 3 archives)" $(for m in "$FARM"/*/*.meta; do printf '%s ' "${m%.meta}"; done)
# PCP has no folio merge: one pmlogextract per host, one after the other,
# against pcpextract --folio (hosts in parallel, one per core).
FARM_PCP="for h in $FARM/*; do $PMLOGEXTRACT \$h/*.meta $OUT/\$(basename \$h) || exit 1; done"
compare "folio merge (8 hosts)" "$FARM_PCP" "$BIN/pcpextract --no-sync --folio $FARM -o $OUT/farm"

# Compressed inputs (issue 21): the same archives as pmlogger_daily leaves
# them, xz volumes of 10 MiB blocks. Outputs are plain on both sides.
if [ -n "$HOURLYXZ_BASES" ]; then
	input "$(basename "$BIG")-xz (xz -0, 10 MiB blocks)" "$BIGXZ"
	compare "copy, xz input" "$PMLOGEXTRACT $BIGXZ $OUT/x" "$BIN/pcpcat --no-sync $BIGXZ -o $OUT/x"
	compare "window -S/-T (10 min), xz input" "$PMLOGEXTRACT $WIN $BIGXZ $OUT/x" "$BIN/pcpextract --no-sync $WIN $BIGXZ -o $OUT/x"
	# shellcheck disable=SC2086 # a list
	HOURLYXZ8=$(echo $HOURLYXZ_BASES | cut -d' ' -f1-8)
	# shellcheck disable=SC2086
	input "$(basename "$HOURLY")-xz (8 archives)" $HOURLYXZ8
	compare "merge, xz input" "$PMLOGEXTRACT $HOURLYXZ8 $OUT/x" "$BIN/pcpextract --no-sync $HOURLYXZ8 -o $OUT/x"
	# shellcheck disable=SC2086
	input "$(basename "$HOURLY")-xz ($(echo $HOURLYXZ_BASES | wc -w) archives)" $HOURLYXZ_BASES
	compare "merge, xz input" "$PMLOGEXTRACT $HOURLYXZ_BASES $OUT/x" "$BIN/pcpextract --no-sync $HOURLYXZ_BASES -o $OUT/x"
fi

# Merging many small archives (issue 20): N = 100, 800, 2000 (MANY_SIZES)
# inputs, in two shapes: copies of one QA archive (20041125: one host,
# the same 48 minutes, every input overlapping every other) and hourly
# pieces of one host (the same archive moved on by an hour each time: no
# two overlap, as pmlogger's daily or hourly archives). Made on first use
# under bench/data/many-*/ (about 700 MiB each). Run only these rows with
# `--only many`. pmlogextract keeps three files open per input and stops
# at the default limit of 1024 ("Too many open files" at about 340
# inputs): both sides run with the soft limit raised to the hard one.
MANY_SIZES=${MANY_SIZES:-100 800 2000}
MANY_QA=${MANY_QA:-/var/lib/pcp/testsuite/archives/20041125}

# many_wanted: whether --only leaves any of these rows to run
many_wanted() {
	local n shape
	[ -z "$only" ] && return 0
	for n in $MANY_SIZES; do
		for shape in copies hourly; do
			if [[ "many: merge $n $shape" == *"$only"* ]]; then return 0; fi
		done
	done
	return 1
}

# many_data MAX: the two sets of MAX inputs, made if missing
many_data() {
	local max=$1 i cfg
	if [ ! -e "$DATA/many-copies/c$(printf %04d "$max").meta" ]; then
		mkdir -p "$DATA/many-copies"
		for ((i = 1; i <= max; i++)); do
			for f in "$MANY_QA".*; do
				cp "$f" "$DATA/many-copies/c$(printf %04d $i).${f##*.}"
			done
		done
	fi
	if [ ! -e "$DATA/many-hours/h$(printf %04d "$max").meta" ]; then
		mkdir -p "$DATA/many-hours"
		cfg=$(mktemp -d)
		for ((i = 1; i <= max; i++)); do
			echo "global { time -> +$((i - 1)):00:00 }" >"$cfg/$i.conf"
		done
		seq 1 "$max" | xargs -P 2 -I{} sh -c \
			"[ -e $DATA/many-hours/h\$(printf %04d {}).meta ] || $PCP_BINADM_DIR/pmlogrewrite -c $cfg/{}.conf $MANY_QA $DATA/many-hours/h\$(printf %04d {})"
		rm -rf "$cfg"
	fi
}

# many_rows: the rows, both sides reading the same N inputs
many_rows() {
	local n max=0 shape dir p
	many_wanted || return 0
	for n in $MANY_SIZES; do max=$((n > max ? n : max)); done
	many_data "$max"
	for shape in copies hourly; do
		dir=$DATA/many-hours p=h
		if [ "$shape" = copies ]; then dir=$DATA/many-copies p=c; fi
		for n in $MANY_SIZES; do
			# shellcheck disable=SC2046 # one word per archive
			input "$n x $(basename "$MANY_QA") ($shape)" $(seq -f "$dir/$p%04g" 1 "$n")
			compare "many: merge $n $shape" \
				"ulimit -Sn \$(ulimit -Hn) && cd $dir && $PMLOGEXTRACT \$(seq -f $p%04g 1 $n) $OUT/x" \
				"ulimit -Sn \$(ulimit -Hn) && cd $dir && $BIN/pcpextract --no-sync \$(seq -f $p%04g 1 $n) -o $OUT/x"
		done
	done
}
many_rows

# ---------------------------------------------------------------------------

table() {
	echo "| operation | input | MiB | PCP s | PCP CPU s | PCP RSS MiB | PCP MiB/s | ours s | ours CPU s | ours RSS MiB | ours MiB/s | speedup (best runs) | speedup (median of pair ratios) | RSS (ours / PCP) |"
	echo "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
	printf '%s\n' "${ROWS[@]}"
	if [ "${#SIZES[@]}" -gt 0 ]; then
		echo
		echo "| reduction of $(basename "$BIG") | input bytes | output bytes | reduction ratio (input / output) |"
		echo "|---|--:|--:|--:|"
		printf '%s\n' "${SIZES[@]}"
	fi
}

machine() {
	local cpu mem
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
	echo "$(nproc) CPUs ($cpu), $mem RAM, $(uname -sr); PCP $PCP_VERSION; $(go version 2>/dev/null | cut -d' ' -f3 || echo 'go ?'); $(page_reporting)"
}

# page_reporting says whether the guest hands freed memory back to its
# host (virtio-balloon free page reporting, as on the Firecracker VMs this
# project runs on): the first write to such a page after ~2 s then costs a
# host fault, which made a 1 GiB page-cache write 3.2 s of system time
# instead of 0.26 s (docs/benchmarks.md, tenth session). Runs are steadier
# with it off: echo 11 > /sys/module/page_reporting/parameters/page_reporting_order
# (as root; 9 is the default).
page_reporting() {
	local f=/sys/module/page_reporting/parameters/page_reporting_order o
	if [ ! -r "$f" ]; then
		echo "free page reporting: none"
		return
	fi
	o=$(cat "$f")
	if [ "$o" -gt 10 ]; then
		echo "free page reporting: off (order $o)"
	else
		echo "free page reporting: on (order $o)"
	fi
}

echo
table
echo

# --record keeps one section per kind of host in docs/benchmarks.md,
# headed "## Host: CPU MODEL (family F, model M)" (hosts that all call
# themselves "AMD EPYC" differ by family): a run replaces its host's
# section and leaves the others (a target counts only where it holds on
# every host recorded).
if [ "$record" = 1 ] && [ -n "$only" ]; then
	# A partial run would replace the host's whole table with its few
	# rows (it did, 2026-12-02): its rows are printed above instead.
	echo "bench.sh: --only: the host's section of docs/benchmarks.md is left as it is (the rows above are this run's)" >&2
elif [ "$record" = 1 ]; then
	mkdir -p docs
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	family=$(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -1)
	model=$(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo | head -1)
	heading="## Host: $cpu (family $family, model $model)"
	section=$(mktemp)
	{
		echo "$heading"
		echo
		echo "Generated by \`scripts/bench.sh --record$([ "$small" = 1 ] && echo " --small")$([ "$runs" != 1 ] && echo " --runs $runs")$([ -n "$only" ] && echo " --only $only")\` on $(date -u +%Y-%m-%d)."
		echo "Machine: $(machine); $(grep -m1 -E '^(cpu family|model)[[:space:]]' /proc/cpuinfo | tr -s '\t ' ' ') / $(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | tr -s '\t ' ' ')."
		echo "Inputs: synthetic archives from \`scripts/gen-bench-archive.py\`. Warm page cache; wall time, CPU time (user+system) and"
		echo "peak RSS from GNU time; MiB/s = input size / wall time; a sync before every run; ours with \`--no-sync\` against PCP's"
		echo "unsynced tools, and the \"synced\" rows both to disk. $([ "$runs" != 1 ] && echo "$runs runs per command, the two sides taking turns; times of the best run; speedups of the best runs and the median of the ratios of the pairs of runs." || echo "One run per command.")"
		echo
		table
		echo
	} >"$section"
	if [ ! -e docs/benchmarks.md ]; then
		printf '# Benchmarks: pcptools vs PCP\n\n' >docs/benchmarks.md
	fi
	awk -v heading="$heading" -v section="$section" '
		$0 == heading { skip = 1; while ((getline l < section) > 0) print l; done = 1; next }
		skip && /^## / { skip = 0 }
		!skip { print }
		END { if (!done) { print ""; while ((getline l < section) > 0) print l } }
	' docs/benchmarks.md >docs/benchmarks.md.new
	mv docs/benchmarks.md.new docs/benchmarks.md
	rm -f "$section"
	echo "bench.sh: wrote the section \"$heading\" of docs/benchmarks.md" >&2
fi
