#!/usr/bin/python3
"""Write large synthetic PCP archives for the benchmarks.

Two shapes:

  gen-bench-archive.py [-s 1G] [-V 2] [OUTDIR]
      one big archive, OUTDIR/big-v2 (.0 .meta .index), of about SIZE bytes
      (default 1 GiB): 480 metrics over five instance domains of 32 to 512
      instances, ~12,700 values per record, one record every 10 s.

  gen-bench-archive.py --hourly [-n 24] [-s 470M] [-V 2] [OUTDIR]
      COUNT consecutive one-hour archives of one host, named like pmlogger's
      (OUTDIR/hourly-v2/20240101.00.00 ...), about SIZE bytes together: the
      input of the merge benchmark. Counters continue across the hours.

OUTDIR defaults to bench/data/ (ignored by git). Existing output is kept
unless --force is given; output is written to a temporary name and renamed
only when complete, so an interrupted run never leaves half an archive.

What the data looks like, and why:
  * a mix of every numeric type PCP has plus strings: U64 and U32 counters
    (some U32 counters wrap during the big archive), DOUBLE, FLOAT, U32, 32
    and 64 instants, and U64/U32/FLOAT/STRING discrete metrics;
  * discrete metrics are logged in the first record and every 60th after
    that, as pmlogger's "once"-style logging does, so records differ in size;
  * the process instance domain changes: every simulated hour some processes
    exit (no more values) and new ones start (new instances, so the indom is
    written again in the .meta);
  * help text for every metric and indom, and context, domain, indom, item
    and per-instance labels;
  * deterministic: the same arguments give the same archive, byte for byte
    apart from the writer's process id in the three label records.

Speed: values go in through pmiGetHandle/pmiPutValueHandle, calling the C
function directly (one pmiUseContext per archive instead of one per value),
with the value strings of instant metrics taken as slices of precomputed
pools. It costs about 21 ms of CPU per 12,700-value record, 6 ms of it
making the value strings and the rest in ctypes and libpcp_import: measured
110 s of CPU for the 1 GiB archive (5164 records) and 60 s for the 24 hourly
archives, on one core. Writing fewer distinct values or concatenating
time-shifted copies would be faster, but would spoil the counters (they
would jump back at every seam) and the process churn.

Uses the system python3 (Debian's python3-pcp is not visible to a pyenv or
venv python), hence the /usr/bin/python3 interpreter line.
"""

import argparse
import os
import random
import re
import shutil
import sys
import time

try:
    from pcp import pmi
    import cpmapi as c_api
except ImportError as e:
    sys.exit("gen-bench-archive: cannot import pcp.pmi (%s); install python3-pcp "
             "(scripts/install-deps.sh) and run with /usr/bin/python3" % e)

DOMAIN = 245             # PMI_DOMAIN, the domain LOGIMPORT tools use
INTERVAL = 10.0          # seconds between records
DISCRETE_EVERY = 60      # records between two samples of a discrete metric
CHURN_EVERY = 360        # records between process churn events (1 h at 10 s)
CHURN_FRACTION = 0.05    # share of the processes replaced at each event
START = 1704067200       # 2024-01-01T00:00:00Z
HOSTNAME = "bench-host.example.com"

TYPE_NAMES = {
    c_api.PM_TYPE_32: "32", c_api.PM_TYPE_U32: "U32", c_api.PM_TYPE_64: "64",
    c_api.PM_TYPE_U64: "U64", c_api.PM_TYPE_FLOAT: "FLOAT",
    c_api.PM_TYPE_DOUBLE: "DOUBLE", c_api.PM_TYPE_STRING: "STRING",
}
T32, TU32, T64, TU64 = (c_api.PM_TYPE_32, c_api.PM_TYPE_U32,
                        c_api.PM_TYPE_64, c_api.PM_TYPE_U64)
TFLOAT, TDOUBLE, TSTRING = (c_api.PM_TYPE_FLOAT, c_api.PM_TYPE_DOUBLE,
                            c_api.PM_TYPE_STRING)
COUNTER, INSTANT, DISCRETE = (c_api.PM_SEM_COUNTER, c_api.PM_SEM_INSTANT,
                              c_api.PM_SEM_DISCRETE)

# units as (dimSpace, dimTime, dimCount, scaleSpace, scaleTime, scaleCount)
NONE = (0, 0, 0, 0, 0, 0)
COUNT = (0, 0, 1, 0, 0, c_api.PM_COUNT_ONE)
MSEC = (0, 1, 0, 0, c_api.PM_TIME_MSEC, 0)
BYTE = (1, 0, 0, c_api.PM_SPACE_BYTE, 0, 0)
KBYTE = (1, 0, 0, c_api.PM_SPACE_KBYTE, 0, 0)
MBYTE_PER_SEC = (1, -1, 0, c_api.PM_SPACE_MBYTE, c_api.PM_TIME_SEC, 0)
HZ = (0, -1, 0, 0, c_api.PM_TIME_SEC, 0)

# ---------------------------------------------------------------------------
# The metric catalogue. Instance domains: (key, serial, instances at scale 1,
# namer). Metrics: (name, type, semantics, units); the indom comes from the
# group. Names are modelled on the Linux PMDA's so that outputs read
# naturally, but everything lives in domain 245.

COMMANDS = ["/usr/sbin/sshd -D", "/usr/bin/python3 worker.py", "/usr/lib/postgresql/15/bin/postgres",
            "nginx: worker process", "/usr/bin/java -Xmx4g -jar app.jar", "bash", "/usr/sbin/cron -f",
            "/usr/lib/systemd/systemd-journald", "/usr/bin/dockerd", "redis-server *:6379",
            "/usr/libexec/pcp/bin/pmcd", "[kworker/u16:2]", "/usr/bin/containerd", "node server.js"]


def disk_name(i):
    if i % 4 == 3:
        return "nvme%dn1" % (i // 4)
    letters, k = "", i
    while True:
        letters = chr(ord("a") + k % 26) + letters
        k = k // 26 - 1
        if k < 0:
            return "sd" + letters


def netif_name(i):
    if i == 0:
        return "lo"
    if i < 5:
        return "eth%d" % (i - 1)
    return "veth%06x" % (i * 2654435761 % 0xffffff)


INDOMS = [
    ("cpu", 0, 256, lambda i: "cpu%d" % i),
    ("disk", 1, 128, disk_name),
    ("netif", 2, 64, netif_name),
    ("proc", 3, 512, None),           # named when processes start
    ("fs", 4, 32, lambda i: "/dev/mapper/vg0-lv%02d" % i),
]
INDOM_HELP = {
    "cpu": ("set of all processors", "One instance per logical processor, cpu0 to cpuN."),
    "disk": ("set of all disks", "One instance per block device: sd* and nvme* names."),
    "netif": ("set of network interfaces", "Loopback, physical eth* and virtual veth* interfaces."),
    "proc": ("set of all processes", "One instance per process, named by zero-padded PID and command line."
             " Processes come and go: this indom changes during the archive."),
    "fs": ("set of mounted filesystems", "One instance per mounted block device filesystem."),
}

GROUPS = {
    "cpu": [("kernel.percpu.cpu.%s" % n, TU64, COUNTER, MSEC) for n in
            ("user", "nice", "sys", "idle", "wait.total", "intr", "irq.soft", "irq.hard",
             "steal", "guest", "guest_nice", "vuser", "vnice")] +
           [("kernel.percpu.softirqs.%s" % n, TU32, COUNTER, COUNT) for n in
            ("hi", "timer", "net_tx", "net_rx", "block", "sched")] +
           [("kernel.percpu.util", TDOUBLE, INSTANT, NONE),
            ("hinv.cpu.clock", TFLOAT, DISCRETE, NONE),
            ("hinv.cpu.model_name", TSTRING, DISCRETE, NONE)],
    "disk": [("disk.dev.%s" % n, TU32, COUNTER, COUNT) for n in
             ("read", "write", "total", "read_merge", "write_merge")] +
            [("disk.dev.%s" % n, TU64, COUNTER, KBYTE) for n in
             ("read_bytes", "write_bytes", "total_bytes")] +
            [("disk.dev.%s" % n, TU32, COUNTER, MSEC) for n in
             ("avactive", "read_rawactive", "write_rawactive")] +
            [("disk.dev.aveq", TU64, COUNTER, MSEC),
             ("disk.dev.util", TDOUBLE, INSTANT, NONE),
             ("disk.dev.queue_delta", T32, INSTANT, COUNT),
             ("disk.dev.await", TFLOAT, INSTANT, MSEC),
             ("disk.dev.inflight_bytes", T64, INSTANT, BYTE),
             ("disk.dev.capacity", TU64, DISCRETE, KBYTE),
             ("disk.dev.scheduler", TSTRING, DISCRETE, NONE)],
    "netif": [("network.interface.%s" % n, TU64, COUNTER, BYTE if "bytes" in n else COUNT) for n in
              ("in.bytes", "in.packets", "out.bytes", "out.packets", "total.bytes")] +
             [("network.interface.%s" % n, TU32, COUNTER, COUNT) for n in
              ("in.errors", "in.drops", "out.errors", "out.drops", "collisions")] +
             [("network.interface.up", TU32, INSTANT, NONE),
              ("network.interface.running", TU32, INSTANT, NONE),
              ("network.interface.speed", TFLOAT, INSTANT, MBYTE_PER_SEC),
              ("network.interface.util", TDOUBLE, INSTANT, NONE),
              ("network.interface.backlog", T64, INSTANT, BYTE),
              ("network.interface.mtu", TU32, DISCRETE, BYTE),
              ("network.interface.duplex", TU32, DISCRETE, NONE),
              ("network.interface.baudrate", TU64, DISCRETE, BYTE),
              ("network.interface.ipaddr", TSTRING, DISCRETE, NONE),
              ("network.interface.hw_addr", TSTRING, DISCRETE, NONE)],
    "proc": [("proc.psinfo.utime", TU64, COUNTER, MSEC),
             ("proc.psinfo.stime", TU64, COUNTER, MSEC),
             ("proc.psinfo.rss", TU64, INSTANT, KBYTE),
             ("proc.psinfo.vsize", TU64, INSTANT, KBYTE),
             ("proc.psinfo.nice", T32, INSTANT, NONE),
             ("proc.psinfo.threads", TU32, INSTANT, COUNT),
             ("proc.io.read_bytes", TU64, COUNTER, BYTE),
             ("proc.io.write_bytes", TU64, COUNTER, BYTE),
             ("proc.psinfo.cmd", TSTRING, DISCRETE, NONE),
             ("proc.psinfo.start_time", TU64, DISCRETE, MSEC)],
    "fs": [("filesys.%s" % n, TU64, INSTANT, KBYTE) for n in ("used", "free", "avail")] +
          [("filesys.full", TDOUBLE, INSTANT, NONE),
           ("filesys.usedfiles", TU32, INSTANT, COUNT),
           ("filesys.freefiles", TU32, INSTANT, COUNT),
           ("filesys.capacity", TU64, DISCRETE, KBYTE),
           ("filesys.maxfiles", TU32, DISCRETE, COUNT),
           ("filesys.blocksize", TU32, DISCRETE, BYTE),
           ("filesys.mountdir", TSTRING, DISCRETE, NONE)],
}


def singular_metrics(total=400):
    """The singular (no indom) metrics: a named core plus numbered filler,
    cycling through every type so that each appears many times."""
    core = [("kernel.all.%s" % n, TU64, COUNTER, COUNT) for n in ("pswitch", "sysfork", "intr", "syscall")] + \
           [("kernel.all.%s" % n, TU32, INSTANT, COUNT) for n in ("nprocs", "runnable", "blocked")] + \
           [("kernel.all.load%s" % n, TFLOAT, INSTANT, NONE) for n in ("1", "5", "15")] + \
           [("mem.util.%s" % n, TU64, INSTANT, KBYTE) for n in
            ("free", "used", "cached", "bufmem", "active", "inactive", "slab", "available")] + \
           [("swap.%s" % n, TU64, INSTANT, KBYTE) for n in ("used", "free")] + \
           [("network.tcp.%s" % n, TU32, COUNTER, COUNT) for n in
            ("activeopens", "passiveopens", "retranssegs", "insegs", "outsegs")] + \
           [("kernel.all.uptime", TU64, INSTANT, (0, 1, 0, 0, c_api.PM_TIME_SEC, 0)),
            ("kernel.all.entropy", T32, INSTANT, NONE),
            ("mem.util.committed_delta", T64, INSTANT, KBYTE),
            ("kernel.all.cpu.util", TDOUBLE, INSTANT, NONE),
            ("hinv.ncpu", TU32, DISCRETE, COUNT),
            ("hinv.physmem", TU64, DISCRETE, KBYTE),
            ("hinv.cpu.freq_max", TFLOAT, DISCRETE, HZ)] + \
           [("kernel.uname.%s" % n, TSTRING, DISCRETE, NONE) for n in
            ("release", "version", "sysname", "machine", "nodename", "distro")]
    cycle = [(TU64, COUNTER, COUNT), (TDOUBLE, INSTANT, NONE), (TU32, INSTANT, COUNT),
             (T64, INSTANT, BYTE), (TFLOAT, INSTANT, MSEC), (TU32, COUNTER, COUNT),
             (T32, INSTANT, NONE), (TU64, INSTANT, KBYTE), (TDOUBLE, INSTANT, NONE),
             (TU64, COUNTER, BYTE), (TSTRING, DISCRETE, NONE), (TU64, DISCRETE, COUNT)]
    filler = []
    i = 0
    while len(core) + len(filler) < total:
        typ, sem, units = cycle[i % len(cycle)]
        filler.append(("bench.misc.g%02d.m%03d" % (i // 32, i), typ, sem, units))
        i += 1
    return core + filler


# ---------------------------------------------------------------------------
# Sizes

def parse_size(s):
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(i?[bB])?\s*", s)
    if not m:
        raise argparse.ArgumentTypeError("bad size %r (want e.g. 1G, 470M, 20000000)" % s)
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def human(n):
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return "%.1f %s" % (n / div, unit)
    return "%d B" % n


def value_bytes(typ, strlen=0):
    """Bytes one value adds to a data record: the {inst, value} pair plus,
    for non-INSITU types, a 4-byte pmValueBlock header and the payload
    padded to 4 bytes."""
    if typ in (T32, TU32):
        return 8
    if typ == TFLOAT:
        return 8 + 8
    if typ == TSTRING:
        return 8 + 4 + (strlen + 1 + 3) // 4 * 4
    return 8 + 12


# ---------------------------------------------------------------------------
# Value columns: one per metric, holding the handles of its instances and
# producing one list of value strings per record (or None: not this record).

class Counter:
    """value = base + rate*r + wobble, wrapped to the type's width. The
    wobble stays within [0, rate] so that a counter never goes backwards
    except where it wraps."""

    def __init__(self, rng, typ, n, magnitude):
        self.wrap = (1 << 32) if typ == TU32 else (1 << 64)
        self.rate = [rng.randint(0, magnitude) for _ in range(n)]
        if typ == TU32:
            # a few start close to 2^32 so that they wrap during a long archive
            self.base = [rng.randint(0, 1 << 31) if rng.random() > 0.005
                         else (1 << 32) - rng.randint(1, magnitude * 500 + 1) for _ in range(n)]
        else:
            self.base = [rng.randint(0, 1 << 40) for _ in range(n)]

    def restart(self, slot, r):
        """A new process in this slot: its counter starts from zero at r."""
        self.base[slot] = -self.rate[slot] * r

    def values(self, r):
        w = self.wrap
        return [b"%d" % ((b + k * r + (r * 40503 + i * 31) % (k + 1)) % w)
                for i, (b, k) in enumerate(zip(self.base, self.rate))]


class Pool:
    """Instants: a window sliding over a fixed pool of value strings."""

    def __init__(self, rng, typ, n, salt):
        self.n = n
        size = n + 4099
        if typ == TDOUBLE:
            vals = [b"%.6f" % (rng.random() * 100.0) for _ in range(size)]
        elif typ == TFLOAT:
            vals = [b"%.3f" % (rng.random() * 1000.0) for _ in range(size)]
        elif typ == TU32:
            vals = [b"%d" % rng.randint(0, 1 << 20) for _ in range(size)]
        elif typ == T32:
            vals = [b"%d" % rng.randint(-20000, 20000) for _ in range(size)]
        elif typ == T64:
            vals = [b"%d" % rng.randint(-(1 << 40), 1 << 40) for _ in range(size)]
        else:  # U64
            vals = [b"%d" % rng.randint(0, 1 << 44) for _ in range(size)]
        self.vals = vals
        self.span = size - n
        self.salt = salt

    def values(self, r):
        off = (r * 389 + self.salt) % self.span
        return self.vals[off:off + self.n]


class Discrete:
    """Discrete metrics: constant per instance, logged every DISCRETE_EVERY."""

    def __init__(self, vals):
        self.vals = vals

    def values(self, r):
        if r % DISCRETE_EVERY:
            return None
        return self.vals


class Column:
    def __init__(self, name, typ, handles, gen):
        self.name, self.typ, self.handles, self.gen = name, typ, handles, gen


def discrete_value(rng, name, typ, key, inst_name):
    if typ == TSTRING:
        if name == "proc.psinfo.cmd":
            return inst_name.split(" ", 1)[1].split(" ")[0].encode()
        if name == "network.interface.ipaddr":
            return b"10.%d.%d.%d" % (rng.randint(0, 255), rng.randint(0, 255), rng.randint(1, 254))
        if name == "network.interface.hw_addr":
            return b":".join(b"%02x" % rng.randint(0, 255) for _ in range(6))
        if name == "disk.dev.scheduler":
            return rng.choice([b"mq-deadline", b"none", b"bfq", b"kyber"])
        if name == "filesys.mountdir":
            return b"/srv/vol%02d" % rng.randint(0, 99)
        if name == "hinv.cpu.model_name":
            return b"Synthetic(R) Bench CPU @ 2.40GHz"
        return ("%s value %d for %s" % (name.rsplit(".", 1)[-1], rng.randint(0, 999), inst_name or "host")).encode()
    if typ == TFLOAT:
        return b"%.1f" % rng.choice([2400.0, 3100.5, 1800.25])
    return b"%d" % rng.randint(1, 1 << 30)


# ---------------------------------------------------------------------------

class Generator:
    """Holds the metric catalogue and the evolving state (counters, live
    processes), and writes it into one or more archives in sequence."""

    def __init__(self, scale, seed=1, estimate_only=False):
        self.rng = random.Random(seed)
        self.scale = scale
        self.counts = {key: max(1, int(round(n * scale))) for key, _, n, _ in INDOMS}
        self.counts["fs"] = max(self.counts["fs"], 4)
        self.next_pid = 1000
        # proc slots: (instance id, name) of the live process in each slot
        self.proc = [self.new_process() for _ in range(self.counts["proc"])]
        self.churned = set()   # slots whose process changed since the last archive start

        self.defs = []         # (name, typ, sem, units, key or None)
        for key, _, _, _ in INDOMS:
            for name, typ, sem, units in GROUPS[key]:
                self.defs.append((name, typ, sem, units, key))
        for name, typ, sem, units in singular_metrics():
            self.defs.append((name, typ, sem, units, None))

        # value generators, one per metric, built once so that counters keep
        # counting across hourly archives
        self.gens = []
        if estimate_only:
            return
        for mi, (name, typ, sem, units, key) in enumerate(self.defs):
            n = self.counts[key] if key else 1
            if sem == DISCRETE:
                names = self.instance_names(key) if key else [None]
                gen = Discrete([discrete_value(self.rng, name, typ, key, nm) for nm in names])
            elif sem == COUNTER:
                mag = 50000 if typ == TU64 else 2000
                gen = Counter(self.rng, typ, n, mag)
            else:
                gen = Pool(self.rng, typ, n, salt=mi * 7919)
            self.gens.append(gen)

    def new_process(self):
        self.next_pid += self.rng.randint(1, 40)
        pid = self.next_pid
        return pid, "%06d %s" % (pid, self.rng.choice(COMMANDS))

    def instance_names(self, key):
        if key == "proc":
            return [nm for _, nm in self.proc]
        namer = dict((k, f) for k, _, _, f in INDOMS)[key]
        return [namer(i) for i in range(self.counts[key])]

    def instance_ids(self, key):
        if key == "proc":
            return [pid for pid, _ in self.proc]
        return list(range(self.counts[key]))

    def record_bytes(self, version):
        """Average bytes per data record (an estimate from the encoding)."""
        total = 4 + (12 if version == 3 else 8) + 4 + 4
        disc = 0
        for i, (name, typ, sem, _, key) in enumerate(self.defs):
            n = self.counts[key] if key else 1
            if sem == DISCRETE:
                if self.gens:
                    disc += 12 + sum(value_bytes(typ, len(v)) for v in self.gens[i].vals)
                else:
                    disc += 12 + n * value_bytes(typ, 20)
            else:
                total += 12 + n * value_bytes(typ)
        return total + disc / DISCRETE_EVERY

    def values_per_record(self):
        return sum(self.counts[key] if key else 1
                   for name, typ, sem, units, key in self.defs if sem != DISCRETE)

    # -- writing --------------------------------------------------------

    def write_archive(self, path, version, first, nrec, hostname, progress):
        """Write records first..first+nrec-1 to the archive at path."""
        if first > 0 and first % CHURN_EVERY == 0:
            # a new archive starting at a churn point: change the process
            # set before its indom is defined, not after
            self.churn(None, None, None, self.proc_cols(), first)
        log = pmi.pmiLogImport(path)
        log.pmiSetHostname(hostname)
        log.pmiSetTimezone("UTC")
        log.pmiSetVersion(version)

        indoms = {key: log.pmiInDom(DOMAIN, serial) for key, serial, _, _ in INDOMS}
        for key, _, _, _ in INDOMS:
            for iid, nm in zip(self.instance_ids(key), self.instance_names(key)):
                log.pmiAddInstance(indoms[key], nm, iid)

        clusters = {}
        labelled = set()
        cols = []
        for item, ((name, typ, sem, units, key), gen) in enumerate(zip(self.defs, self.gens)):
            group = name.rsplit(".", 1)[0]
            cluster = clusters.setdefault(group, len(clusters))
            pmid = log.pmiID(DOMAIN, cluster, item % 1024)
            indom = indoms[key] if key else c_api.PM_INDOM_NULL
            log.pmiAddMetric(name, pmid, typ, indom, sem, log.pmiUnits(*units))
            names = self.instance_names(key) if key else [None]
            handles = [log.pmiGetHandle(name, nm) for nm in names]
            cols.append(Column(name, typ, handles, gen))
            log.pmiPutText(c_api.PM_TEXT_PMID, c_api.PM_TEXT_ONELINE, pmid,
                           "synthetic %s %s metric" % (TYPE_NAMES[typ], name.rsplit(".", 1)[-1]))
            if item % 3 == 0:
                log.pmiPutText(c_api.PM_TEXT_PMID, c_api.PM_TEXT_HELP, pmid,
                               "Benchmark data for %s, written by gen-bench-archive.py.\n"
                               "The values are synthetic: counters grow at a fixed rate per\n"
                               "instance, instants slide over a pool of random values." % name)
            if item % 25 == 0:
                log.pmiPutLabel(c_api.PM_LABEL_ITEM, pmid, 0, "bench_item", "m%d" % item)
            if cluster % 4 == 0 and cluster not in labelled:
                labelled.add(cluster)
                log.pmiPutLabel(c_api.PM_LABEL_CLUSTER, log.pmiCluster(DOMAIN, cluster), 0,
                                "bench_group", group)

        for key, _, _, _ in INDOMS:
            one, long = INDOM_HELP[key]
            log.pmiPutText(c_api.PM_TEXT_INDOM, c_api.PM_TEXT_ONELINE, indoms[key], one)
            log.pmiPutText(c_api.PM_TEXT_INDOM, c_api.PM_TEXT_HELP, indoms[key], long)
            log.pmiPutLabel(c_api.PM_LABEL_INDOM, indoms[key], 0, "indom_name", key)
        for i in self.instance_ids("cpu"):
            log.pmiPutLabel(c_api.PM_LABEL_INSTANCES, indoms["cpu"], i, "numa_node", str(i * 2 // max(1, self.counts["cpu"])))
        for i, nm in zip(self.instance_ids("disk"), self.instance_names("disk")):
            log.pmiPutLabel(c_api.PM_LABEL_INSTANCES, indoms["disk"], i, "device_class",
                            "nvme" if nm.startswith("nvme") else "scsi")
        log.pmiPutLabel(c_api.PM_LABEL_CONTEXT, 0, 0, "environment", "benchmark")
        log.pmiPutLabel(c_api.PM_LABEL_CONTEXT, 0, 0, "datacenter", "synthetic-1")
        log.pmiPutLabel(c_api.PM_LABEL_DOMAIN, DOMAIN, 0, "agent", "bench")

        # From here on the hot loop talks to the C library directly: the
        # Python wrapper would call pmiUseContext and encode the value again
        # for each of the ~60 million values.
        lib = pmi.LIBPCP_IMPORT
        if lib.pmiUseContext(log.ctx) < 0:
            raise RuntimeError("pmiUseContext failed")
        put = lib.pmiPutValueHandle
        write = lib.pmiWrite2
        proc_cols = self.proc_cols()

        t0 = time.time()
        last_report = t0
        for r in range(first, first + nrec):
            if r != first and r % CHURN_EVERY == 0:
                self.churn(log, indoms["proc"], cols, proc_cols, r)
            for col in cols:
                vals = col.gen.values(r)
                if vals is None:
                    continue
                sts = min(map(put, col.handles, vals))
                if sts < 0:
                    raise RuntimeError("pmiPutValueHandle(%s) at record %d: %s"
                                       % (col.name, r, pmi.pmiErr(sts)))
            sec = START + int(r * INTERVAL)
            usec = (r * 7919) % 5000       # pmlogger-like jitter, < 5 ms
            sts = write(sec, usec)
            if sts < 0:
                raise RuntimeError("pmiWrite at record %d: %s" % (r, pmi.pmiErr(sts)))
            now = time.time()
            if progress and now - last_report >= 10:
                done = r - first + 1
                print("  %d/%d records, %.0f records/s" % (done, nrec, done / (now - t0)),
                      file=sys.stderr, flush=True)
                last_report = now
        sts = lib.pmiEnd()
        if sts < 0:
            raise RuntimeError("pmiEnd: %s" % pmi.pmiErr(sts))
        log._ctx = -1   # already ended: keep __del__ from ending it again

    def proc_cols(self):
        return [i for i, d in enumerate(self.defs) if d[4] == "proc"]

    def churn(self, log, proc_indom, cols, proc_cols, r):
        """Some processes exit and as many new ones start in their slots."""
        n = len(self.proc)
        k = max(1, int(n * CHURN_FRACTION))
        for slot in self.rng.sample(range(n), k):
            pid, nm = self.new_process()
            self.proc[slot] = (pid, nm)
            if log is not None:
                log.pmiAddInstance(proc_indom, nm, pid)
            for cidx in proc_cols:
                name, typ, sem = self.defs[cidx][:3]
                gen = self.gens[cidx]
                if log is not None:
                    cols[cidx].handles[slot] = log.pmiGetHandle(name, nm)
                if sem == COUNTER:
                    gen.restart(slot, r)
                elif sem == DISCRETE:
                    gen.vals[slot] = discrete_value(self.rng, name, typ, "proc", nm)


# ---------------------------------------------------------------------------

def archive_files(dirpath, base):
    pat = re.compile(re.escape(base) + r"\.(\d+|meta|index)$")
    return sorted(f for f in os.listdir(dirpath) if pat.match(f))


def archive_size(dirpath, base):
    return sum(os.path.getsize(os.path.join(dirpath, f)) for f in archive_files(dirpath, base))


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\nWhat the data looks like")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", nargs="?", default=None,
                    help="output directory (default: bench/data/ of the repository)")
    ap.add_argument("--hourly", action="store_true",
                    help="write COUNT consecutive hourly archives of one host instead of one big archive")
    ap.add_argument("-s", "--size", type=parse_size, default=None,
                    help="target size: of the archive (default 1G), or of all hourly archives together (default 470M)")
    ap.add_argument("-n", "--count", type=int, default=24, help="number of hourly archives (default 24)")
    ap.add_argument("-V", "--version", type=int, choices=(2, 3), default=2, help="archive format version (default 2)")
    ap.add_argument("--name", default=None,
                    help="archive base name (default big-vV) or directory name for --hourly (default hourly-vV)")
    ap.add_argument("--volume-size", type=parse_size, default=None,
                    help="start a new data volume when one would exceed this size (PCP_LOGIMPORT_MAXLOGSZ)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("-f", "--force", action="store_true", help="replace existing output")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    args = ap.parse_args()

    outdir = args.outdir or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "data")
    outdir = os.path.normpath(outdir)
    os.makedirs(outdir, exist_ok=True)
    if args.volume_size:
        # read once by libpcp_import, at its first write
        os.environ["PCP_LOGIMPORT_MAXLOGSZ"] = str(args.volume_size)

    if args.hourly:
        return write_hourly(args, outdir)
    return write_big(args, outdir)


def write_big(args, outdir):
    size = args.size or (1 << 30)
    name = args.name or "big-v%d" % args.version
    if archive_files(outdir, name) and not args.force:
        print("gen-bench-archive: %s/%s exists (use --force to replace)" % (outdir, name), file=sys.stderr)
        return 0
    gen = Generator(scale=1.0, seed=args.seed)
    per = gen.record_bytes(args.version)
    nrec = max(2, int(size / per + 0.5))
    tmp = os.path.join(outdir, ".tmp-%s-%d" % (name, os.getpid()))
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    if not args.quiet:
        print("gen-bench-archive: %s/%s: v%d, %d metrics, %d values/record, %d records (~%s)"
              % (outdir, name, args.version, len(gen.defs), gen.values_per_record(), nrec, human(nrec * per)),
              file=sys.stderr)
    t0 = time.time()
    try:
        gen.write_archive(os.path.join(tmp, name), args.version, 0, nrec, HOSTNAME, not args.quiet)
        for f in archive_files(outdir, name):
            os.unlink(os.path.join(outdir, f))
        for f in archive_files(tmp, name):
            os.rename(os.path.join(tmp, f), os.path.join(outdir, f))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    dt = time.time() - t0
    total = archive_size(outdir, name)
    print("gen-bench-archive: wrote %s/%s: %d records, %s in %.1f s (%.1f MiB/s)"
          % (outdir, name, nrec, human(total), dt, total / dt / (1 << 20)), file=sys.stderr)
    return 0


def write_hourly(args, outdir):
    size = args.size or 470 * (1 << 20)
    name = args.name or "hourly-v%d" % args.version
    final = os.path.join(outdir, name)
    if os.path.isdir(final) and os.listdir(final) and not args.force:
        print("gen-bench-archive: %s exists (use --force to replace)" % final, file=sys.stderr)
        return 0
    per_hour = int(3600 / INTERVAL)
    want_per_record = size / (args.count * per_hour)
    # Instance counts scale the record size almost linearly: find the scale
    # by bisection on the size estimate.
    lo, hi = 0.01, 4.0
    for _ in range(30):
        mid = (lo + hi) / 2
        if Generator(scale=mid, seed=args.seed, estimate_only=True).record_bytes(args.version) < want_per_record:
            lo = mid
        else:
            hi = mid
    gen = Generator(scale=lo, seed=args.seed)
    if gen.record_bytes(args.version) > 1.1 * want_per_record:
        print("gen-bench-archive: warning: %s is below the smallest this catalogue makes "
              "(~%s per hour): the archives will be bigger" % (human(size), human(per_hour * gen.record_bytes(args.version))),
              file=sys.stderr)
    tmp = final + ".tmp-%d" % os.getpid()
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    if not args.quiet:
        print("gen-bench-archive: %s: %d hourly v%d archives, scale %.3f, %d values/record, "
              "%d records each (~%s each)"
              % (final, args.count, args.version, lo, gen.values_per_record(), per_hour,
                 human(per_hour * gen.record_bytes(args.version))), file=sys.stderr)
    t0 = time.time()
    try:
        for h in range(args.count):
            stamp = time.gmtime(START + h * 3600)
            base = time.strftime("%Y%m%d.%H.%M", stamp)
            gen.write_archive(os.path.join(tmp, base), args.version, h * per_hour, per_hour,
                              HOSTNAME, False)
            if not args.quiet:
                print("  %s: %s" % (base, human(archive_size(tmp, base))), file=sys.stderr, flush=True)
        if os.path.exists(final):
            shutil.rmtree(final)
        os.rename(tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    dt = time.time() - t0
    total = sum(os.path.getsize(os.path.join(final, f)) for f in os.listdir(final))
    print("gen-bench-archive: wrote %s: %d archives, %s in %.1f s" % (final, args.count, human(total), dt),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
