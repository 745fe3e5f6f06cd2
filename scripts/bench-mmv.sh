#!/bin/sh
# CPU per sample of recording one MMV file of 1,000 metrics x 100
# instances (100,000 values) at a 1 s interval: pcpmmv record, against
# pmlogger + pmcd + pmdammv (a private pmcd, started here and stopped by
# its PID). Needs root (pmcd), PCP 6.0.3 and python3-pcp (/usr/bin/python3).
# Usage: scripts/bench-mmv.sh [SAMPLES]   (default 10)
set -eu
N=${1:-10}
D=$(mktemp -d /tmp/bench-mmv.XXXXXX)
chmod 755 "$D"
trap 'if [ -n "${PMCD:-}" ]; then kill "$PMCD" 2>/dev/null || true; fi; rm -rf "$D"' EXIT
mkdir -p "$D/tmp/mmv" "$D/run"
go build -o "$D/pcpmmv" ./cmd/pcpmmv

PCP_TMP_DIR=$D/tmp /usr/bin/python3 - <<'PY'
from pcp import mmv
from pcp.pmapi import pmUnits
import cmmv
ind = mmv.mmv_indom(serial=1, shorttext="insts", helptext="insts")
ind.set_instances([mmv.mmv_instance(i, "inst%d" % i) for i in range(100)])
ms = [mmv.mmv_metric(name="m%d" % i, item=i + 1, typeof=cmmv.MMV_TYPE_U64,
                     semantics=cmmv.MMV_SEM_COUNTER,
                     dimension=pmUnits(0, 0, 1, 0, 0, 0), indom=1,
                     shorttext="metric %d" % i) for i in range(1000)]
v = mmv.MemoryMappedValues("bench", cluster=7)
v.add_indoms([ind])
v.add_metrics(ms)
v.start()
PY
F=$D/tmp/mmv/bench
echo "file: $(stat -c %s "$F") bytes, 1000 metrics x 100 instances; $N samples at 1 s"
grep -m1 'model name' /proc/cpuinfo

ticks() { # utime+stime of a PID, in clock ticks
	awk '{print $14 + $15}' "/proc/$1/stat"
}
HZ=$(getconf CLK_TCK)

# ours: the whole process over N samples (GNU time, 10 ms ticks), and the
# steady state: the CPU time the process took over the samples after the
# first, per sample, as it counts it itself (getrusage, microseconds;
# PCPTOOLS_RECORDSTATS). Like for like with pmlogger, which never syncs:
# --no-sync; and synced, as our default.
/usr/bin/time -f '%U %S' -o "$D/ours.time" "$D/pcpmmv" record --no-sync -t 1s -s "$N" "$F" -o "$D/ours"
awk -v n="$N" '{printf "pcpmmv record --no-sync: %.2f ms CPU per sample (user+sys, whole process)\n", ($1+$2)*1000/n}' "$D/ours.time"
rm -f "$D"/ours.*
PCPTOOLS_RECORDSTATS=1 "$D/pcpmmv" record --no-sync -t 1s -s "$N" "$F" -o "$D/ours" 2>&1 | sed 's/^pcpmmv:/pcpmmv record --no-sync:/'
rm -f "$D"/ours.*
PCPTOOLS_RECORDSTATS=1 "$D/pcpmmv" record -t 1s -s "$N" "$F" -o "$D/ours" 2>&1 | sed 's/^pcpmmv:/pcpmmv record (synced):/'

# PCP: pmcd + pmdammv + pmlogger
printf 'pmcd\t2\tdso\tpmcd_init\t/var/lib/pcp/pmdas/pmcd/pmda_pmcd.so\nmmv\t70\tpipe\tbinary\t/usr/lib/pcp/pmdas/mmv/pmdammv -d 70\n' > "$D/pmcd.conf"
printf 'root {\n\tmmv\t70:*:*\n}\n' > "$D/root"
printf 'log mandatory on 1 sec {\n\tmmv\n}\n' > "$D/logger.conf"
PORT=$((40000 + $$ % 20000))
export PCP_TMP_DIR=$D/tmp PCP_RUN_DIR=$D/run PCP_LOG_DIR=$D PMCD_PORT=$PORT
cd "$D" # (pmdammv writes its log in the directory pmcd starts in)
/usr/lib/pcp/bin/pmcd -t 60 -f -c "$D/pmcd.conf" -n "$D/root" -l "$D/pmcd.log" -i 127.0.0.1 -p "$PORT" -s "$D/run/pmcd.socket" &
PMCD=$!
sleep 2
PMDA=$(pgrep -P "$PMCD" -f pmdammv || true)
[ -n "$PMDA" ] || { echo "pmdammv did not start under pmcd $PMCD"; cat "$D/pmcd.log"; exit 1; }
c0=$(( $(ticks "$PMCD") + $(ticks "$PMDA") ))
/usr/bin/time -f '%U %S' -o "$D/pml.time" /usr/lib/pcp/bin/pmlogger -h 127.0.0.1 -c "$D/logger.conf" -s "$N" -t 1sec -l "$D/logger.log" "$D/pml" || { echo "pmlogger failed:"; cat "$D/logger.log"; exit 1; }
c1=$(( $(ticks "$PMCD") + $(ticks "$PMDA") ))
awk -v n="$N" -v c="$((c1 - c0))" -v hz="$HZ" '{printf "pmlogger + pmcd + pmdammv: %.2f ms CPU per sample (pmlogger %.2f, pmcd+pmdammv %.2f)\n", (($1+$2)+c/hz)*1000/n, ($1+$2)*1000/n, c/hz*1000/n}' "$D/pml.time"
