#!/usr/bin/env bash
# fuzz.sh: run every Go fuzz target in the module, one after the other, for
# FUZZTIME each (default 30s). Targets are discovered with `go test -list`,
# so a new Fuzz function is picked up without editing anything.
#
#   FUZZTIME=2m scripts/fuzz.sh        all targets
#   scripts/fuzz.sh ./format/...       only the targets in these packages
#   FUZZ_TARGETS='FuzzIndex|FuzzLabelSet' scripts/fuzz.sh   only these targets
#   GOMAXPROCS=1 scripts/fuzz.sh       one fuzzing worker (a shared machine)
#
# FUZZMINIMIZETIME (default 2s) bounds the minimisation of each new
# interesting input: go test's default of 60s lets a target whose inputs
# are whole archives spend a short run minimising, with no executions
# counted (FuzzReadArchive made 17 in a minute that way).
#
# At the end it prints a table of executions and new interesting inputs
# per target (the last "execs:" line go test printed), in the form
# docs/reliability.md records; FUZZ_REPORT=file also writes it there.
#
# `go test -fuzz` accepts a single package and a single target per run, hence
# the loop. A failing input is saved by go test under the package's
# testdata/fuzz/ directory; commit it so that it stays a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-2s}
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)

# `go test -list` prints the matching names of a package, then a line
# "ok <import path> <time>" for it; packages without tests print "?".
if ! listing=$("$GO" test -list '^Fuzz' "${pkgs[@]}"); then
	echo "fuzz: listing the targets failed (does everything build?)" >&2
	exit 1
fi
targets=()
names=()
while read -r first second _; do
	case "$first" in
	Fuzz*) names+=("$first") ;;
	ok)
		for n in "${names[@]}"; do targets+=("$second $n"); done
		names=()
		;;
	*) names=() ;;
	esac
done <<<"$listing"

if [ ${#targets[@]} -eq 0 ]; then
	echo "fuzz: no Fuzz targets found in ${pkgs[*]}"
	exit 0
fi

if [ -n "${FUZZ_TARGETS:-}" ]; then
	kept=()
	for t in "${targets[@]}"; do
		read -r _ name <<<"$t"
		if [[ "$name" =~ ^(${FUZZ_TARGETS})$ ]]; then kept+=("$t"); fi
	done
	targets=("${kept[@]}")
fi

echo "fuzz: ${#targets[@]} target(s), $FUZZTIME each"
failed=()
report="| package | target | time | execs | new interesting | result |
|---|---|---|---:|---:|---|"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "== $pkg $name"
	result=ok
	if ! "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" "$pkg" 2>&1 | tee "$log"; then
		failed+=("$pkg $name")
		result=FAILED
	fi
	# fuzz: elapsed: 1m0s, execs: 123456 (2057/sec), new interesting: 3 (total: 40)
	last=$(grep -E '^fuzz: elapsed: .*execs: ' "$log" | tail -1 || true)
	execs=$(sed -E 's/.*execs: ([0-9]+).*/\1/' <<<"$last")
	newi=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
	report+="
| ${pkg#github.com/pcptools/pcptools/} | $name | $FUZZTIME | ${execs:-?} | ${newi:-?} | $result |"
done
echo
echo "$report"
if [ -n "${FUZZ_REPORT:-}" ]; then
	echo "$report" >"$FUZZ_REPORT"
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: FAILED:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: all ${#targets[@]} target(s) passed"
