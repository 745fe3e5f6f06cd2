#!/usr/bin/env bash
# fuzz.sh: run every Go fuzz target in the module, one after the other, for
# FUZZTIME each (default 30s). Targets are discovered with `go test -list`,
# so a new Fuzz function is picked up without editing anything.
#
#   FUZZTIME=2m scripts/fuzz.sh        all targets
#   scripts/fuzz.sh ./format/...       only the targets in these packages
#
# `go test -fuzz` accepts a single package and a single target per run, hence
# the loop. A failing input is saved by go test under the package's
# testdata/fuzz/ directory; commit it so that it stays a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}
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

echo "fuzz: ${#targets[@]} target(s), $FUZZTIME each"
failed=()
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "== $pkg $name"
	if ! "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg"; then
		failed+=("$pkg $name")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: FAILED:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: all ${#targets[@]} target(s) passed"
