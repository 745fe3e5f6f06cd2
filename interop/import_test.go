package interop

// Differential tests of package logimport against libpcp_import: the same
// sequence of calls is made through python3-pcp's pcp.pmi (Debian's
// /usr/bin/python3) and through our Go API; every call must give the same
// error (or none), and the archives must read the same under pmdumplog
// -a -e -h -I (apart from the PID).

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pcptools/pcptools/logimport"
	"github.com/pcptools/pcptools/stream"
)

const pmiPython = "/usr/bin/python3"

// pmiCall is one LOGIMPORT call, made in Go by do and in Python by py.
type pmiCall struct {
	op string
	s  []string
	n  []int64
}

func cVer(v int) pmiCall     { return pmiCall{op: "ver", n: []int64{int64(v)}} }
func cHost(h string) pmiCall { return pmiCall{op: "host", s: []string{h}} }
func cTZ(z string) pmiCall   { return pmiCall{op: "tz", s: []string{z}} }
func cInst(indom uint32, name string, id int32) pmiCall {
	return pmiCall{op: "inst", s: []string{name}, n: []int64{int64(indom), int64(id)}}
}
func cPut(name, inst, v string) pmiCall { return pmiCall{op: "put", s: []string{name, inst, v}} }
func cHandle(name, inst string) pmiCall { return pmiCall{op: "handle", s: []string{name, inst}} }
func cPutH(h int, v string) pmiCall     { return pmiCall{op: "puth", s: []string{v}, n: []int64{int64(h)}} }
func cWrite(sec, nsec int64) pmiCall    { return pmiCall{op: "write", n: []int64{sec, nsec}} }
func cMark() pmiCall                    { return pmiCall{op: "mark"} }
func cText(typ, class, id uint32, content string) pmiCall {
	return pmiCall{op: "text", s: []string{content}, n: []int64{int64(typ), int64(class), int64(id)}}
}
func cLabel(flags, id uint32, inst int32, name, value string) pmiCall {
	return pmiCall{op: "label", s: []string{name, value}, n: []int64{int64(flags), int64(id), int64(inst)}}
}

// cMetric: units as pmiUnits' six arguments.
func cMetric(name string, pmid uint32, typ stream.Type, indom uint32, sem stream.Sem, u ...int64) pmiCall {
	if len(u) == 0 {
		u = make([]int64, 6)
	}
	return pmiCall{op: "metric", s: []string{name}, n: append([]int64{int64(pmid), int64(typ), int64(indom), int64(sem)}, u...)}
}

const nullID = 0xffffffff

// pmiCodes maps our errors to libpcp_import's codes.
var pmiCodes = []struct {
	err  error
	code int
}{
	{logimport.ErrDupMetricName, -20001}, {logimport.ErrDupMetricID, -20002}, {logimport.ErrDupInstName, -20003},
	{logimport.ErrDupInstID, -20004}, {logimport.ErrInstNotNull, -20005}, {logimport.ErrInstNull, -20006},
	{logimport.ErrBadHandle, -20007}, {logimport.ErrDupValue, -20008}, {logimport.ErrBadType, -20009},
	{logimport.ErrBadSem, -20010}, {logimport.ErrNoData, -20011}, {logimport.ErrBadMetricName, -20012},
	{logimport.ErrBadTimestamp, -20013}, {logimport.ErrBadTextType, -20014}, {logimport.ErrBadTextClass, -20015},
	{logimport.ErrBadTextID, -20016}, {logimport.ErrEmptyText, -20017}, {logimport.ErrDupText, -20018},
	{logimport.ErrBadLabelType, -20019}, {logimport.ErrBadLabelID, -20020}, {logimport.ErrBadLabelInst, -20021},
	{logimport.ErrEmptyLabelName, -20022}, {logimport.ErrEmptyLabelVal, -20023}, {logimport.ErrBadVersion, -20025}, {logimport.ErrAddLabel, -20024},
	{logimport.ErrUnknownMetric, -12357}, {logimport.ErrUnknownInst, -12360}, {logimport.ErrUnknownInDom, -12359},
	{logimport.ErrConv, -12362},
}

func pmiCode(err error) int {
	if err == nil {
		return 0
	}
	for _, c := range pmiCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return -1
}

// runGo makes the calls through logimport; Create comes at the first call
// that is not ver, host or tz, as pmiStart's settings must come first.
func runGo(t *testing.T, base string, calls []pmiCall) []int {
	var opts logimport.Options
	opts.Version = 2 // Debian's pcp.conf: PCP_ARCHIVE_VERSION=2
	opts.NoSync = true
	var im *logimport.Importer
	var handles []logimport.Handle
	var codes []int
	for _, c := range calls {
		var err error
		switch c.op {
		case "ver":
			if c.n[0] != 2 && c.n[0] != 3 {
				err = logimport.ErrBadVersion
			} else {
				opts.Version = int(c.n[0])
			}
		case "host":
			opts.Hostname = c.s[0]
		case "tz":
			opts.Timezone = c.s[0]
		default:
			if im == nil {
				var cerr error
				im, cerr = logimport.Create(base, opts)
				if cerr != nil {
					t.Fatal(cerr)
				}
			}
		}
		switch c.op {
		case "metric":
			u := c.n[4:]
			_, err = im.AddMetric(logimport.Metric{Name: c.s[0], PMID: stream.PMID(c.n[0]), Type: stream.Type(c.n[1]),
				InDom: stream.InDomID(c.n[2]), Sem: stream.Sem(c.n[3]),
				Units: stream.NewUnits(int(u[0]), int(u[1]), int(u[2]), uint(u[3]), uint(u[4]), int(u[5]))})
		case "inst":
			err = im.AddInstance(stream.InDomID(c.n[0]), c.s[0], int32(c.n[1]))
		case "put":
			err = im.PutValue(c.s[0], c.s[1], c.s[2])
		case "handle":
			var h logimport.Handle
			h, err = im.Handle(c.s[0], c.s[1])
			if err == nil {
				handles = append(handles, h)
			}
		case "puth":
			h := logimport.Handle{}
			if int(c.n[0]) < len(handles) {
				h = handles[c.n[0]]
			}
			err = im.PutHandle(h, c.s[0])
		case "write":
			err = im.Write(stream.Timestamp{Sec: c.n[0], Nsec: int32(c.n[1])})
		case "mark":
			err = im.PutMark()
		case "text":
			err = im.PutText(uint32(c.n[0]), uint32(c.n[1]), uint32(c.n[2]), c.s[0])
		case "label":
			err = im.PutLabel(uint32(c.n[0]), uint32(c.n[1]), int32(c.n[2]), c.s[0], c.s[1])
		}
		codes = append(codes, pmiCode(err))
	}
	if err := im.End(); err != nil {
		t.Fatalf("End: %v", err)
	}
	return codes
}

// pyScript writes the calls as a Python program using pcp.pmi.
func pyScript(calls []pmiCall) string {
	var b strings.Builder
	b.WriteString(`import sys, json
from pcp import pmi
log = pmi.pmiLogImport(sys.argv[1])
codes = []
hs = []
def do(f):
    try:
        r = f()
        codes.append(0)
        return r
    except pmi.pmiErr as e:
        codes.append(e.code)
        return None
`)
	q := func(s string) string { j, _ := json.Marshal(s); return string(j) }
	for _, c := range calls {
		var x string
		switch c.op {
		case "ver":
			x = fmt.Sprintf("log.pmiSetVersion(%d)", c.n[0])
		case "host":
			x = fmt.Sprintf("log.pmiSetHostname(%s)", q(c.s[0]))
		case "tz":
			x = fmt.Sprintf("log.pmiSetTimezone(%s)", q(c.s[0]))
		case "metric":
			x = fmt.Sprintf("log.pmiAddMetric(%s, %d, %d, %d, %d, log.pmiUnits(%d, %d, %d, %d, %d, %d))",
				q(c.s[0]), c.n[0], c.n[1], c.n[2], c.n[3], c.n[4], c.n[5], c.n[6], c.n[7], c.n[8], c.n[9])
		case "inst":
			x = fmt.Sprintf("log.pmiAddInstance(%d, %s, %d)", c.n[0], q(c.s[0]), c.n[1])
		case "put":
			x = fmt.Sprintf("log.pmiPutValue(%s, %s, %s)", q(c.s[0]), q(c.s[1]), q(c.s[2]))
		case "handle":
			fmt.Fprintf(&b, "h = do(lambda: log.pmiGetHandle(%s, %s))\nif h is not None: hs.append(h)\n", q(c.s[0]), q(c.s[1]))
			continue
		case "puth":
			x = fmt.Sprintf("log.pmiPutValueHandle(hs[%d] if %d < len(hs) else 9999, %s)", c.n[0], c.n[0], q(c.s[0]))
		case "write":
			x = fmt.Sprintf("log.pmiHighResWrite(%d, %d)", c.n[0], c.n[1])
		case "mark":
			x = "log.pmiPutMark()"
		case "text":
			x = fmt.Sprintf("log.pmiPutText(%d, %d, %d, %s)", c.n[0], c.n[1], c.n[2], q(c.s[0]))
		case "label":
			x = fmt.Sprintf("log.pmiPutLabel(%d, %d, %d, %s, %s)", c.n[0], c.n[1], c.n[2], q(c.s[0]), q(c.s[1]))
		}
		fmt.Fprintf(&b, "do(lambda: %s)\n", x)
	}
	b.WriteString("log.pmiEnd()\nprint(json.dumps(codes))\n")
	return b.String()
}

func needPMI(t *testing.T) {
	t.Helper()
	needPCP(t)
	if r := run(time.Minute, nil, pmiPython, "-c", "import pcp.pmi"); r.code != 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3-pcp is required in CI: %s", r.stderr)
		}
		t.Skipf("python3-pcp missing: %s", r.stderr)
	}
}

// compareImport runs calls both ways and compares codes and dumps.
func compareImport(t *testing.T, calls []pmiCall) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "imp.py")
	if err := os.WriteFile(script, []byte(pyScript(calls)), 0o644); err != nil {
		t.Fatal(err)
	}
	theirs, mine := filepath.Join(dir, "pmi"), filepath.Join(dir, "ours")
	r := run(time.Minute, nil, pmiPython, script, theirs)
	if r.code != 0 {
		t.Fatalf("pcp.pmi: %s%s", r.stdout, r.stderr)
	}
	var want []int
	if err := json.Unmarshal([]byte(strings.TrimSpace(lastLine(r.stdout))), &want); err != nil {
		t.Fatalf("pcp.pmi output %q: %v", r.stdout, err)
	}
	got := runGo(t, mine, calls)
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			g := 99999
			if i < len(got) {
				g = got[i]
			}
			t.Errorf("call %d %s %v %v: pcp.pmi gives %d, we give %d", i, calls[i].op, calls[i].s, calls[i].n, want[i], g)
		}
	}
	wd := dumpOf(t, theirs, "-a", "-e", "-h", "-I")
	gd := dumpOf(t, mine, "-a", "-e", "-h", "-I")
	if os.Getenv("PCPTOOLS_IMPORT_SHOW") != "" {
		g, _ := os.ReadFile(gd)
		t.Logf("pmdumplog of ours:\n%s", g)
	}
	if d := sameDump(wd, gd, theirs, mine); d != "" {
		w, _ := os.ReadFile(wd)
		g, _ := os.ReadFile(gd)
		t.Errorf("pmdumplog differs at %s\n--- pcp.pmi:\n%s\n--- ours:\n%s", d, w, g)
	}
	if w, g := strings.Join(checkFindings(theirs), "\n"), strings.Join(checkFindings(mine), "\n"); w != g {
		t.Errorf("pmlogcheck differs:\n--- pcp.pmi:\n%s\n--- ours:\n%s", w, g)
	}
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// moverCalls is the seed document's mover example: the log lines, the
// counters summed, and the metrics it defines.
func moverCalls(version int) []pmiCall {
	lines := []string{
		"2010-07-04 13:46:29 14 files (6, 8, 0) 142512 bytes (92098)",
		"2010-07-04 13:46:59 51 files (28, 23, 0) 132761 bytes (33239)",
		"2010-07-04 13:47:29 36 files (23, 12, 1) 5733152 bytes (5688400)",
		"2010-07-04 13:47:59 49 files (40, 9, 0) 118418 bytes (70669)",
		"2010-07-04 13:50:59 0 files (0, 0, 0) 0 bytes (0)",
	}
	sz := uint32(stream.NewInDomID(logimport.Domain, 0))
	calls := []pmiCall{cVer(version), cHost("mover.example.com"), cTZ("UTC"),
		cMetric("mover.nfile", nullID, stream.TypeU32, nullID, stream.SemCounter, 0, 0, 1, 0, 0, 0),
		cMetric("mover.nbyte", nullID, stream.TypeU64, nullID, stream.SemCounter, 1, 0, 0, 0, 0, 0),
		cMetric("mover.max_file_size", nullID, stream.TypeU64, nullID, stream.SemInstant, 1, 0, 0, 0, 0, 0),
		cMetric("mover.nfile_by_size", nullID, stream.TypeU32, sz, stream.SemCounter, 0, 0, 1, 0, 0, 0),
		cInst(sz, "<=1Kbyte", 0), cInst(sz, "<=1Mbyte", 1), cInst(sz, ">1Mbyte", 2),
	}
	var nfile, nbyte int64
	var bySize [3]int64
	for _, l := range lines {
		l = strings.NewReplacer("(", "", ")", "", ",", "").Replace(l)
		f := strings.Fields(l)
		tm, _ := time.Parse("2006-01-02T15:04:05", f[0]+"T"+f[1])
		var n [10]int64
		for i := 2; i < 10; i++ {
			fmt.Sscan(f[i], &n[i])
		}
		nfile += n[2]
		nbyte += n[7]
		calls = append(calls, cPut("mover.nfile", "", fmt.Sprint(nfile)), cPut("mover.nbyte", "", fmt.Sprint(nbyte)),
			cPut("mover.max_file_size", "", f[9]))
		for i, name := range []string{"<=1Kbyte", "<=1Mbyte", ">1Mbyte"} {
			bySize[i] += n[4+i]
			calls = append(calls, cPut("mover.nfile_by_size", name, fmt.Sprint(bySize[i])))
		}
		calls = append(calls, cWrite(tm.Unix(), 0))
	}
	return calls
}

func TestImportMoverPMI(t *testing.T) {
	needPMI(t)
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprint("v", v), func(t *testing.T) { compareImport(t, moverCalls(v)) })
	}
}

// everyCalls covers every value type, singular and with instances, an
// instance domain that grows, handles, help text, labels of every kind,
// a mark, equal timestamps, a value that does not parse and (for v3)
// nanoseconds.
func everyCalls(version int) []pmiCall {
	d0 := uint32(stream.NewInDomID(30, 0))
	d1 := uint32(stream.NewInDomID(logimport.Domain, 7))
	ns := int64(0)
	if version == 3 {
		ns = 123456789
	}
	calls := []pmiCall{cVer(version), cHost("every.example.com"), cTZ("EST-10")}
	types := []stream.Type{stream.Type32, stream.TypeU32, stream.Type64, stream.TypeU64, stream.TypeFloat, stream.TypeDouble, stream.TypeString}
	vals := []string{"-17", "4000000000", "-9000000000000", "18000000000000000000", "1.5", "2.25e-300", "hello world"}
	for i, ty := range types {
		calls = append(calls,
			cMetric("s.t"+ty.String(), nullID, ty, nullID, stream.SemInstant, 0, 1, 0, 0, 3, 0),
			cMetric("m.t"+ty.String(), uint32(stream.NewPMID(30, 2, uint32(i))), ty, d0, stream.SemDiscrete, 1, -1, 0, 2, 3, 0))
	}
	calls = append(calls, cMetric("other.one", nullID, stream.TypeU64, d1, stream.SemCounter, 0, 0, 1, 0, 0, 1),
		cInst(d0, "cpu0", 0), cInst(d0, "cpu1 extra", 5), cInst(d1, "z", 3))
	for i, ty := range types {
		calls = append(calls, cPut("s.t"+ty.String(), "", vals[i]), cPut("m.t"+ty.String(), "cpu1", vals[i]), cPut("m.t"+ty.String(), "cpu1 x", vals[i]),
			cPut("m.t"+ty.String(), "cpu0", vals[(i+1)%len(vals)]))
	}
	calls = append(calls, cText(stream.TextPMID, stream.TextOneline, uint32(stream.NewPMID(30, 2, 0)), "a 32-bit metric"),
		cText(stream.TextPMID, stream.TextHelp, uint32(stream.NewPMID(30, 2, 0)), "Longer help\non two lines."),
		cText(stream.TextInDom, stream.TextOneline, d0, "the CPUs"),
		cLabel(stream.LabelContext, nullID, -1, "zone", "north"), cLabel(stream.LabelContext, nullID, -1, "agent", "import"),
		cLabel(stream.LabelItem, uint32(stream.NewPMID(30, 2, 1)), -1, "device", "true"),
		cLabel(stream.LabelInDom, d0, -1, "kind", "cpu"),
		cLabel(stream.LabelInstances, d0, 5, "socket", "1"),
		cLabel(stream.LabelDomain, 30<<22, -1, "pmda", "test"),
		cLabel(stream.LabelCluster, uint32(stream.NewPMID(30, 2, 0)), -1, "c", "null"),
		cLabel(stream.LabelItem|uint32(stream.LabelOptional), uint32(stream.NewPMID(30, 2, 2)), -1, "opt", "yes"),
		cWrite(1700000000, ns))
	// Handles; the domain grows; a value that does not parse; equal times.
	calls = append(calls, cHandle("m.tU64", "cpu0"), cHandle("s.tDOUBLE", ""), cHandle("m.tU64", "nosuch"),
		cInst(d0, "cpu2", 2), cHandle("m.tU64", "cpu2"),
		cPutH(0, "11"), cPutH(1, "0.5"), cPutH(2, "12"), cPut("other.one", "z", "7"),
		cPut("s.t32", "", "12abc"), cPut("m.t32", "cpu0", "x"), cPut("m.t32", "cpu1", "3"),
		cWrite(1700000001, 0), cPutH(0, "13"), cWrite(1700000001, 0),
		cMark(), cLabel(stream.LabelContext, nullID, -1, "after", "mark"), cWrite(1700000005, ns),
		cText(stream.TextPMID, stream.TextOneline, uint32(stream.NewPMID(30, 2, 6)), "strings"),
		cPut("s.tSTRING", "", ""), cPut("m.tFLOAT", "cpu2", ""), cWrite(1700000006, 0))
	return calls
}

func TestImportEveryPMI(t *testing.T) {
	needPMI(t)
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprint("v", v), func(t *testing.T) { compareImport(t, everyCalls(v)) })
	}
}

// errorCalls makes every mistake libpcp_import rejects; each must give
// the same error both ways, and what was written before must agree.
func errorCalls() []pmiCall {
	d := uint32(stream.NewInDomID(logimport.Domain, 1))
	return []pmiCall{cVer(5), cVer(3), cHost("err.example.com"), cTZ("UTC"),
		cMetric("a.b", nullID, stream.TypeU32, nullID, stream.SemInstant),
		cMetric("a.b", nullID, stream.TypeU32, nullID, stream.SemInstant),
		cMetric("a.c", uint32(stream.NewPMID(1, 2, 3)), stream.TypeDouble, d, stream.SemInstant),
		cMetric("a.d", uint32(stream.NewPMID(1, 2, 3)), stream.TypeDouble, d, stream.SemInstant),
		cMetric("a.e", nullID, stream.TypeAggregate, nullID, stream.SemInstant),
		cMetric("a.f", nullID, stream.Type(99), nullID, stream.SemInstant),
		cMetric("a.g", nullID, stream.TypeU32, nullID, stream.Sem(2)),
		cMetric("1a", nullID, stream.TypeU32, nullID, stream.SemInstant),
		cMetric("a..b", nullID, stream.TypeU32, nullID, stream.SemInstant),
		cMetric("a.b.", nullID, stream.TypeU32, nullID, stream.SemInstant),
		cMetric("a.1b", nullID, stream.TypeU32, nullID, stream.SemInstant),
		cWrite(100, 0),
		cInst(d, "one", 1), cInst(d, "one", 2), cInst(d, "two", 1), cInst(d, "three x", 3), cInst(d, "three y", 4),
		cPut("nosuch", "", "1"), cPut("a.b", "one", "1"), cPut("a.c", "", "1"), cPut("a.c", "nine", "1"),
		cPut("a.b", "", "1"), cPut("a.b", "", "2"), cPut("a.c", "one", "x1"), cPut("a.c", "three", "1"),
		cPutH(7, "1"), cWrite(100, 500), cPut("a.b", "", "2"), cWrite(99, 0), cWrite(101, 0),
		cText(3, stream.TextHelp, 1, "x"), cText(stream.TextPMID, 3, 1, "x"), cText(stream.TextPMID, stream.TextHelp, nullID, "x"),
		cText(stream.TextPMID, stream.TextHelp, 1, ""), cText(stream.TextPMID, stream.TextHelp, 1, "x"),
		cText(stream.TextPMID, stream.TextHelp, 1, "x"),
		cLabel(0x100, 1, -1, "a", "b"), cLabel(stream.LabelItem, nullID, -1, "a", "b"),
		cLabel(stream.LabelInstances, d, -1, "a", "b"), cLabel(stream.LabelItem, 1, -1, "", "b"),
		cLabel(stream.LabelItem, 1, -1, "a", ""), cLabel(stream.LabelItem, 1, -1, "q", `say "hi"`),
		cLabel(stream.LabelItem, 1, -1, "u", "naïve"), cWrite(102, 0), cWrite(103, 0),
	}
}

func TestImportErrorsPMI(t *testing.T) {
	needPMI(t)
	compareImport(t, errorCalls())
}

// jsonRoundTripCI are the QA archives of the JSON round trip in CI: v2 and
// v3, instance domains that change (deltas), labels, help text, strings,
// marks; PCPTOOLS_IMPORT_FULL=1 takes every QA archive.
var jsonRoundTripCI = []string{"20041125", "sample_expr", "mark-bug", "sample-labels", "changeinst", "dyninsts", "value-test", "eventrec", "runq", "pcp-free"}

// jsonLoss are QA archives whose content JSON lines do not carry, by
// docs/dump-formats.md: values in blocks of type 0 (pmdumplog prints their
// unconverted bytes), names that are not UTF-8.
var jsonLoss = map[string]string{
	"960624.08.17_v2": "type-0 value blocks", "bozo.client_v2": "type-0 value blocks",
	"babylon.pmview_v2": "type-0 value blocks",
	"procpid-encode2":   "instance names that are not UTF-8",
}

// jsonFlags are the views compared: -s is left out, as the byte size of a
// record is its encoding, which JSON does not carry (values are compared by
// -m).
var jsonFlags = []string{"-d", "-i", "-L", "-m", "-e", "-h", "-I"}

// jsonNormal removes from a dump what JSON lines do not carry: a label's
// optional and compound flags, and the sign of a NaN.
var jsonNormal = strings.NewReplacer(",compound]", "]", ",optional]", "]", "value -nan", "value nan")

// TestImportJSONRoundTrip: pcpcat --json A | pcpimport --json -o B gives
// an archive that reads as A under pmdumplog, for every archive whose
// content JSON carries (event values and undefined semantics are refused,
// naming the line).
func TestImportJSONRoundTrip(t *testing.T) {
	needPCP(t)
	archives := []string{}
	if os.Getenv("PCPTOOLS_IMPORT_FULL") != "" {
		archives = lightArchives(t)
	} else {
		for _, a := range jsonRoundTripCI {
			if m, _ := filepath.Glob(filepath.Join(qaDir, a+".meta*")); len(m) > 0 {
				archives = append(archives, filepath.Join(qaDir, a))
			}
		}
		if len(archives) < 4 {
			t.Fatalf("only %d of the round-trip archives found", len(archives))
		}
	}
	forEach(t, archives, jsonRoundTrip)
}

// TestImportJSONRoundTripV3: the same on v3 copies (pcpcat -V 3, with
// delta instance domains) of archives whose instances change.
func TestImportJSONRoundTripV3(t *testing.T) {
	needPCP(t)
	for _, a := range []string{"changeinst", "dyninsts"} {
		t.Run(a, func(t *testing.T) {
			v3 := filepath.Join(t.TempDir(), a)
			if r := run(slow, nil, ours("pcpcat"), "-V", "3", filepath.Join(qaDir, a), "-o", v3); r.code != 0 {
				t.Fatalf("pcpcat -V 3: %s", r.stderr)
			}
			jsonRoundTrip(t, v3)
		})
	}
}

func jsonRoundTrip(t *testing.T, a string) {
	{
		if why, ok := jsonLoss[filepath.Base(a)]; ok {
			t.Skipf("JSON lines do not carry this archive's %s", why)
		}
		out := filepath.Join(t.TempDir(), "rt")
		r := run(slow, nil, "sh", "-c", `"$0" --json "$1" | "$2" --json -o "$3"`, ours("pcpcat"), a, ours("pcpimport"), out)
		if r.code != 0 {
			if strings.Contains(r.stderr, "cannot be imported from JSON") {
				t.Skipf("JSON does not carry it: %s", r.stderr)
			}
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		for _, f := range jsonFlags {
			w, g := normalDump(t, dumpOf(t, a, f)), normalDump(t, dumpOf(t, out, f))
			if d := sameDump(w, g, a, out); d != "" {
				t.Errorf("pmdumplog %s differs: %s", f, d)
			}
		}
	}
}

func normalDump(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(jsonNormal.Replace(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestImportSheet2pcp: pcpimport --map imports sheet2pcp's own man page
// example and mapfiles covering every element and attribute to the same
// archive as sheet2pcp (apart from the PID); where sheet2pcp fails (the
// man page's own CSV puts 0.750 into a U64), pcpimport fails too, naming
// the cell, and leaves no archive.
func TestImportSheet2pcp(t *testing.T) {
	needPCP(t)
	if _, err := os.Stat("/usr/bin/sheet2pcp"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("sheet2pcp is required in CI (pcp-import-sheet2pcp)")
		}
		t.Skip("sheet2pcp not installed")
	}
	td, _ := filepath.Abs("../logimport/testdata/sheet")
	for _, c := range []struct {
		csv, xml string
		ok       bool
		args     []string
	}{
		{"manpage.csv", "manpage.xml", false, nil},
		{"manpage-int.csv", "manpage.xml", true, nil},
		{"every.csv", "every.xml", true, nil},
		{"every-empty.csv", "every.xml", true, []string{"--empty-zero"}},
		{"mdy.csv", "mdy.xml", true, []string{"-V", "2"}},
		{"mdy.csv", "mdy.xml", true, []string{"-V", "3"}},
	} {
		t.Run(c.csv+"+"+c.xml+strings.Join(c.args, ""), func(t *testing.T) {
			dir := t.TempDir()
			theirs, mine := filepath.Join(dir, "sheet2pcp"), filepath.Join(dir, "ours")
			var sargs []string
			for i, a := range c.args {
				if a == "-V" {
					sargs = append(sargs, "-V", c.args[i+1])
				}
			}
			r := run(time.Minute, nil, "sheet2pcp", append(sargs, filepath.Join(td, c.csv), filepath.Join(td, c.xml), theirs)...)
			_, err := os.Stat(theirs + ".0")
			if (r.code == 0 && err == nil) != c.ok {
				t.Fatalf("sheet2pcp: exit %d, %v: %s%s", r.code, err, r.stdout, r.stderr)
			}
			o := run(time.Minute, nil, ours("pcpimport"), append(c.args, "--map", filepath.Join(td, c.xml), filepath.Join(td, c.csv), "-o", mine)...)
			if !c.ok {
				if o.code == 0 || !strings.Contains(o.stderr, c.csv+":2:") {
					t.Errorf("pcpimport: exit %d, %q: want a failure naming line 2", o.code, o.stderr)
				}
				if m, _ := filepath.Glob(mine + "*"); len(m) > 0 {
					t.Errorf("left behind: %v", m)
				}
				return
			}
			if o.code != 0 {
				t.Fatalf("pcpimport: exit %d: %s", o.code, o.stderr)
			}
			d := sameOutputs(t, theirs, mine, "-a", "-e", "-h", "-I")
			if d != "" {
				t.Errorf("pmdumplog differs: %s", d)
			}
		})
	}
}
