#!/usr/bin/env bash
# A short tour of pcpcat, pcpextract and pcprewrite on the archive the project generates itself
# (testdata/example/demo: 7 metrics, 60 samples, a <mark>, two volumes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ex=testdata/example/demo
bin=./bin
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

say pcpcat -L $ex
$bin/pcpcat -L $ex
say pcpcat -d $ex
$bin/pcpcat -d $ex
say pcpcat -z -S @10:04 -T @10:05:30 $ex kernel.all.load disk.dev.read
$bin/pcpcat -z -S @10:04 -T @10:05:30 $ex kernel.all.load disk.dev.read
say "pcpcat --csv $ex mem.util.free | head -4"
$bin/pcpcat --csv $ex mem.util.free | head -4
say "pcpcat $ex | pcpcat -V 3 -o $out/demo-v3      # through the pipe, converted to v3"
$bin/pcpcat $ex | $bin/pcpcat -V 3 -o "$out/demo-v3"
ls -l "$out"
say pcpcat -l $out/demo-v3
$bin/pcpcat -l "$out/demo-v3"
say "pcpcat --check $ex      # finds the counter wrap the example has on purpose"
$bin/pcpcat --check $ex || echo "(exit status $?)"
say "pcpextract -z -S @10:04 -T @10:06 $ex -o $out/window    # a window, once-logged values carried"
$bin/pcpextract -z -S @10:04 -T @10:06 $ex -o "$out/window"
$bin/pcpcat -z "$out/window" hinv.ncpu kernel.all.load | head -12
cat >"$out/fix.rules" <<'RULES'
metric name == "mem.util.free" { units = UNITS("1,0,0,MBYTE,0,0") rescale }
RULES
say "pcpcat $ex | pcprewrite -r fix.rules | pcpcat -o fixed    # mem.util.free: kilobytes to megabytes"
$bin/pcpcat $ex | $bin/pcprewrite -r "$out/fix.rules" | $bin/pcpcat -o "$out/fixed"
$bin/pcpcat -z "$out/fixed" mem.util.free | head -6
if command -v pmlogcheck >/dev/null; then
	say "pmlogcheck -w $out/demo-v3      # PCP accepts what we wrote"
	pmlogcheck -w "$out/demo-v3" && echo ok
fi
