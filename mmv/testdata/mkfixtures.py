# Writes MMV fixture files with PCP's libpcp_mmv through python3-pcp's
# pcp.mmv module.  Usage: /usr/bin/python3 mkfixtures.py DIR
# Files land in DIR/mmv/ (PCP_TMP_DIR is pointed at DIR).
# v1: pcp.mmv's MemoryMappedValues (mmv_stats_init); v2/v3: the registry
# API of the same library, through pcp.mmv's ctypes handle.
import os
import sys

os.environ["PCP_TMP_DIR"] = sys.argv[1]
os.makedirs(os.path.join(sys.argv[1], "mmv"), exist_ok=True)

from ctypes import c_char_p, c_int, c_uint, c_void_p, POINTER  # noqa: E402
from pcp import mmv  # noqa: E402
from pcp.pmapi import pmUnits, pmAtomValue  # noqa: E402
import cmmv  # noqa: E402

L = mmv.LIBPCP_MMV
T = [cmmv.MMV_TYPE_I32, cmmv.MMV_TYPE_U32, cmmv.MMV_TYPE_I64,
     cmmv.MMV_TYPE_U64, cmmv.MMV_TYPE_FLOAT, cmmv.MMV_TYPE_DOUBLE,
     cmmv.MMV_TYPE_STRING, cmmv.MMV_TYPE_ELAPSED]
SEM = [cmmv.MMV_SEM_COUNTER, cmmv.MMV_SEM_INSTANT, cmmv.MMV_SEM_DISCRETE]
UNITS = [pmUnits(0, 0, 1, 0, 0, 0), pmUnits(1, -1, 0, 1, 3, 0),
         pmUnits(0, 1, 0, 0, 1, 0), pmUnits(0, 0, 0, 0, 0, 0)]
VALS = [-42, 4000000000, -9000000000, 18000000000000000000, 1.5, 2.25]


def v1(name, flags, cluster):
    insts = [mmv.mmv_instance(0, "zero"), mmv.mmv_instance(1, "one"),
             mmv.mmv_instance(7, "seven")]
    ind = mmv.mmv_indom(serial=3, shorttext="three insts",
                        helptext="help for three")
    ind.set_instances(insts)
    ind2 = mmv.mmv_indom(serial=5, shorttext="", helptext=None)
    ind2.set_instances([mmv.mmv_instance(100, "hundred")])
    ms = []
    for i, t in enumerate(T):
        ms.append(mmv.mmv_metric(
            name="m%d.single" % i, item=i + 1, typeof=t,
            semantics=SEM[i % 3], dimension=UNITS[i % 4],
            shorttext="short %d" % i, helptext="long help %d" % i))
        ms.append(mmv.mmv_metric(
            name="m%d.set" % i, item=i + 20, typeof=t,
            semantics=SEM[(i + 1) % 3], dimension=UNITS[(i + 1) % 4],
            indom=3 if i % 2 == 0 else 5, shorttext=""))
    v = mmv.MemoryMappedValues(name, flags=flags, cluster=cluster)
    v.add_indoms([ind, ind2])
    v.add_metrics(ms)
    v.start()
    for i, t in enumerate(T):
        for nm, inst in (("m%d.single" % i, ""), ("m%d.set" % i, "one"),
                         ("m%d.set" % i, "hundred")):
            m = v.lookup_mapping(nm, inst)
            if not m:
                continue
            if t == cmmv.MMV_TYPE_STRING:
                v.set_string(m, "str %s %s" % (nm, inst))
            elif t == cmmv.MMV_TYPE_ELAPSED:
                v.add(m, 5000)
            else:
                v.set(m, VALS[i])
    return v


ALIVE = []  # the registry keeps pointers to our strings: keep them alive


def B(s):
    if s is None:
        return None
    b = s if isinstance(s, bytes) else s.encode()
    ALIVE.append(b)
    return c_char_p(b)


def registry(name, flags, cluster, longnames, labels):
    L.mmv_stats_registry.restype = c_void_p
    L.mmv_stats_registry.argtypes = [c_char_p, c_int, c_int]
    L.mmv_stats_add_indom.argtypes = [c_void_p, c_int, c_char_p, c_char_p]
    L.mmv_stats_add_instance.argtypes = [c_void_p, c_int, c_int, c_char_p]
    L.mmv_stats_add_metric.argtypes = [c_void_p, c_char_p, c_int, c_int,
                                       c_int, pmUnits, c_int, c_char_p,
                                       c_char_p]
    for f in ("registry", "indom", "metric", "instance"):
        fn = getattr(L, "mmv_stats_add_%s_label" % f)
        extra = {"registry": [], "indom": [c_int], "metric": [c_int],
                 "instance": [c_int, c_int]}[f]
        fn.argtypes = [c_void_p] + extra + [c_char_p, c_char_p, c_int, c_int]
    L.mmv_stats_start.restype = c_void_p
    L.mmv_stats_start.argtypes = [c_void_p]
    r = L.mmv_stats_registry(B(name), cluster, flags)
    pre = "x" * 70 + "." if longnames else ""
    ipre = "instance_" * 9 if longnames else "i"
    L.mmv_stats_add_indom(r, 9, B("nine short"), B("nine help"))
    for k in range(4):
        L.mmv_stats_add_instance(r, 9, k * 3, B("%s%d" % (ipre, k)))
    for i, t in enumerate(T):
        L.mmv_stats_add_metric(r, B("%sr%d.single" % (pre, i)), i + 1,
                               t, SEM[i % 3], UNITS[i % 4], 0,
                               B("one line"), None)
        L.mmv_stats_add_metric(r, B("%sr%d.set" % (pre, i)), i + 30,
                               t, SEM[i % 3], UNITS[(i + 2) % 4], 9,
                               None, B("help text"))
    if labels:
        L.mmv_stats_add_registry_label(r, b"app", b'"fixture"', 1, 0)
        L.mmv_stats_add_registry_label(r, b"opt", b"12", 2, 1)
        L.mmv_stats_add_indom_label(r, 9, b"kind", b'"nines"', 1, 0)
        L.mmv_stats_add_metric_label(r, 31, b"flag", b"true", 3, 0)
        L.mmv_stats_add_metric_label(r, 2, b"none", b"null", 4, 0)
        L.mmv_stats_add_instance_label(r, 9, 3, b"arr", b"[1,2]", 5, 0)
        L.mmv_stats_add_instance_label(r, 9, 6, b"map", b'{"a":1}', 6, 0)
        L.mmv_stats_add_instance_label(r, 9, 0, b"multi", b'{"a":1,"b":"x"}', 6, 0)
        L.mmv_stats_add_instance_label(r, 9, 0, b"b0", b"7", 2, 0)
    h = L.mmv_stats_start(r)
    if not h:
        raise SystemExit("mmv_stats_start failed for " + name)
    for i, t in enumerate(T):
        for k in range(4):
            for nm, inst in (("%sr%d.single" % (pre, i), ""),
                             ("%sr%d.set" % (pre, i), "%s%d" % (ipre, k))):
                a = L.mmv_lookup_value_desc(h, nm.encode(), inst.encode())
                if not a:
                    raise SystemExit("lookup %s[%s] failed" % (nm, inst))
                if t == cmmv.MMV_TYPE_STRING:
                    s = ("val %d" % k).encode()
                    L.mmv_set_string(h, a, s, len(s))
                elif t == cmmv.MMV_TYPE_ELAPSED:
                    L.mmv_inc_value(h, a, 1000 * (k + 1))
                else:
                    L.mmv_set_value(h, a, VALS[i] + k)
    return h


keep = []
keep.append(v1("v1plain", 0, 42))
keep.append(v1("v1flags", 7, 4095))
keep.append(v1("v1noprefix", 1, 0))
keep.append(registry("v2long", 0, 12, True, False))
keep.append(registry("v3labels", 4, 321, False, True))
keep.append(registry("v3long", 2, 1, True, True))
