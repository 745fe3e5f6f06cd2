package pcptime

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// Comparisons with pmdumplog and pmlogsummary on the QA archives.

// pcpEnv is the environment PCP tools run in here: no $TZ, so that glibc
// takes the local zone from /etc/localtime, as for a user who never set
// it. Tests that exercise the default zone set TZ explicitly.
func pcpEnv(extra ...string) []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "TZ=") && !strings.HasPrefix(e, "PCP_") && !strings.HasPrefix(e, "LC_") {
			env = append(env, e)
		}
	}
	return append(append(env, "LC_ALL=C"), extra...)
}

func pcpRun(t *testing.T, env []string, tool string, args ...string) string {
	t.Helper()
	bin := needTool(t, tool)
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %q: %v", tool, args, err)
	}
	return string(out)
}

// qaArchiveNames lists the QA archives by base name.
func qaArchiveNames(t *testing.T) []string {
	t.Helper()
	metas, _ := filepath.Glob(qaArchives + "/*.meta*")
	if len(metas) == 0 {
		missing(t, "no QA archives in %s", qaArchives)
	}
	seen := map[string]bool{}
	var names []string
	for _, m := range metas {
		b := filepath.Base(m)
		b = b[:strings.Index(b, ".meta")]
		if !seen[b] {
			seen[b] = true
			names = append(names, b)
		}
	}
	sort.Strings(names)
	return names
}

var (
	// "    commencing Wed Nov 24 23:10:06.248424 2004 1101337806"
	labelLineRE = regexp.MustCompile(`^    (commencing|ending    ) (\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d\.(\d+) \d{4}) (\d+)$`)
	// "Wed Nov 24 23:11:06.305961 2004 (60.057537) 1101337866 132 metrics"
	recordXRE = regexp.MustCompile(`^(\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d\.(\d+) \d{4}) \(([-\d.]+)\) (\d+) `)
	// "23:11:06.305961 132 metrics"
	recordRE = regexp.MustCompile(`^(\d\d:\d\d:\d\d\.(\d+)) `)
)

type dumpedLabel struct {
	version          int
	start, end       stream.Timestamp
	startStr, endStr string
	hasEnd           bool
	tz, zoneinfo     string
	host             string
}

// stamp rebuilds a timestamp from the epoch seconds pmdumplog -xxx prints
// and the fraction digits of its time.
func stamp(t *testing.T, epoch, frac string) stream.Timestamp {
	t.Helper()
	sec, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return stream.Timestamp{Sec: sec, Nsec: int32(n)}
}

func parseDumpedLabel(t *testing.T, out string) dumpedLabel {
	t.Helper()
	var l dumpedLabel
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Log Label (Log Format Version "):
			l.version, _ = strconv.Atoi(strings.TrimSuffix(line[len("Log Label (Log Format Version "):], ")"))
		case strings.HasPrefix(line, "Performance metrics from host "):
			l.host = line[len("Performance metrics from host "):]
		case strings.HasPrefix(line, "Archive timezone: "):
			l.tz = line[len("Archive timezone: "):]
		case strings.HasPrefix(line, "Archive zoneinfo: "):
			l.zoneinfo = line[len("Archive zoneinfo: "):]
		default:
			m := labelLineRE.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			ts := stamp(t, m[4], m[3])
			if m[1] == "commencing" {
				l.start, l.startStr = ts, m[2]
			} else {
				l.end, l.endStr, l.hasEnd = ts, m[2], true
			}
		}
	}
	if l.version == 0 || l.startStr == "" {
		t.Fatalf("no label in pmdumplog output:\n%s", out)
	}
	return l
}

// labelTZ reads the timezone string from the label of an uncompressed
// .meta file (v2: after 24 bytes of header and a 64-byte host name; v3:
// after 36 bytes and a 256-byte host name). It reports false for anything
// else.
func labelTZ(meta string) (string, bool) {
	f, err := os.Open(meta)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b := make([]byte, 600)
	n, _ := f.Read(b)
	b = b[:n]
	if len(b) < 132 {
		return "", false
	}
	off, size := 88, 40
	if b[7] == 3 {
		off, size = 292, 256
	}
	if len(b) < off+size {
		return "", false
	}
	tz := b[off : off+size]
	if i := strings.IndexByte(string(tz), 0); i >= 0 {
		tz = tz[:i]
	}
	return string(tz), true
}

// TestLabelTimesMatchPmdumplog checks ZoneForLabel and FormatDate against
// pmdumplog -z -L on QA archives, the smallest one for each distinct label
// timezone: fixed offsets, Jn/n/Mm.w.d rules, zoneinfo names and the
// three-letter "UTC" that PCP turns into "UTC+0".
func TestLabelTimesMatchPmdumplog(t *testing.T) {
	needTool(t, "pmdumplog")
	type cand struct {
		name string
		size int64
	}
	best := map[string]cand{}
	for _, a := range qaArchiveNames(t) {
		tz, ok := labelTZ(qaArchives + "/" + a + ".meta")
		if !ok {
			continue
		}
		fi, err := os.Stat(qaArchives + "/" + a + ".0")
		if err != nil {
			continue
		}
		if c, ok := best[tz]; !ok || fi.Size() < c.size {
			best[tz] = cand{a, fi.Size()}
		}
	}
	if len(best) < 15 {
		t.Errorf("only %d distinct label timezones found", len(best))
	}
	env := pcpEnv()
	for tz, c := range best {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := parseDumpedLabel(t, pcpRun(t, env, "pmdumplog", "-z", "-L", "-xxx", qaArchives+"/"+c.name))
			if l.tz != tz {
				t.Errorf("label timezone %q, pmdumplog says %q", tz, l.tz)
			}
			loc, err := ZoneForLabel(l.tz, l.zoneinfo)
			if err != nil {
				t.Fatalf("ZoneForLabel(%q, %q): %v", l.tz, l.zoneinfo, err)
			}
			prec := PrecisionFor(l.version)
			if got := FormatDate(l.start, loc, prec); got != l.startStr {
				t.Errorf("TZ %q: commencing %q, FormatDate %q", l.tz, l.startStr, got)
			}
			if l.hasEnd {
				if got := FormatDate(l.end, loc, prec); got != l.endStr {
					t.Errorf("TZ %q: ending %q, FormatDate %q", l.tz, l.endStr, got)
				}
			}
		})
	}
}

// dumpZones are -Z arguments; each is also what a label's timezone could
// hold. "EST" and "CET" are three characters long, so PCP makes them UTC.
var dumpZones = []string{
	"EST", "EST5EDT", "<+0130>-1:30", ":Australia/Melbourne",
	"EST-11EST-10,89/2:00,299/2:00", "NZST-12NZDT,M9.5.0,M4.1.0/3",
}

// recordArchives are dumped record by record: small archives whose label
// zones have rules, both archive versions, and marks.
var recordArchives = []string{
	"20041125", "rattle", "omnibus_v3", "omnibus-nomark_v3", "mark-bug", "gmt-boring", "fcsw_indom",
	"960624.08.17_v2", "sample-secs", "moomba.client", "mirage", "19970807.09.54",
}

// TestRecordTimesMatchPmdumplog compares every record header pmdumplog
// prints, with -xxx and without -x, under -z and several -Z zones.
func TestRecordTimesMatchPmdumplog(t *testing.T) {
	env := pcpEnv()
	for _, a := range recordArchives {
		t.Run(a, func(t *testing.T) {
			t.Parallel()
			recordTimes(t, env, a)
		})
	}
}

func recordTimes(t *testing.T, env []string, a string) {
	{
		path := needArchive(t, a)
		l := parseDumpedLabel(t, pcpRun(t, env, "pmdumplog", "-z", "-L", "-xxx", path))
		prec := PrecisionFor(l.version)
		zones := [][]string{{"-z"}}
		for _, z := range dumpZones {
			zones = append(zones, []string{"-Z", z})
		}
		for _, zarg := range zones {
			var loc *time.Location
			var err error
			if zarg[0] == "-z" {
				loc, err = ZoneForLabel(l.tz, l.zoneinfo)
			} else {
				loc, err = NewZone(zarg[1])
			}
			if err != nil {
				t.Fatalf("%s %q: %v", a, zarg, err)
			}
			outX := pcpRun(t, env, "pmdumplog", append(zarg, "-xxx", path)...)
			outT := pcpRun(t, env, "pmdumplog", append(zarg, path)...)
			explicit := ""
			if len(zarg) > 1 {
				explicit = zarg[1]
			}
			if note := ZoneNote(zarg[0] == "-z", explicit, l.host); !strings.HasPrefix(outT, note) {
				t.Errorf("%s %q: output starts %q, ZoneNote %q", a, zarg, outT[:min(len(outT), len(note))], note)
			}
			var stamps []stream.Timestamp
			for _, line := range strings.Split(outX, "\n") {
				m := recordXRE.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				ts := stamp(t, m[4], m[2])
				stamps = append(stamps, ts)
				if got := FormatDate(ts, loc, prec); got != m[1] {
					t.Errorf("%s %q: pmdumplog -xxx %q, FormatDate %q", a, zarg, m[1], got)
				}
				if got := string(AppendElapsed(nil, ts, l.start, prec)); got != m[3] {
					t.Errorf("%s: pmdumplog -xx offset %q, AppendElapsed %q", a, m[3], got)
				}
			}
			if len(stamps) == 0 {
				t.Fatalf("%s %q: no records parsed", a, zarg)
			}
			i := 0
			for _, line := range strings.Split(outT, "\n") {
				m := recordRE.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				if i >= len(stamps) {
					t.Fatalf("%s %q: more records without -x than with", a, zarg)
				}
				if got := FormatTime(stamps[i], loc, prec); got != m[1] {
					t.Errorf("%s %q: pmdumplog %q, FormatTime %q", a, zarg, m[1], got)
				}
				i++
			}
			if i != len(stamps) {
				t.Errorf("%s %q: %d records without -x, %d with", a, zarg, i, len(stamps))
			}
		}
	}
}

// Specs whose meaning does not depend on today's date, for comparisons
// that run PCP tools.
var toolWindowSpecs = [][2]string{
	{"", ""}, {"+10m", ""}, {"", "-10m"}, {"+10m", "-10m"}, {"10m", "+5m"}, {"-20m", ""},
	{"@23:30", ""}, {"@23:30", "@23:40"}, {"@ 23:11:06.305961", ""}, {"", "@ Wed Nov 24 23:11:06.305961 2004"},
	{"@ Nov 24 23:30 2004", "@ Nov 24 23:45:30.5 2004"}, {"@00:20", "@00:40"}, {"@ 23:59:59.999999", ""},
	{"2004-11-24 23:30:00", "2004-11-24 23:40:00"}, {"Nov 24, 2004 11:20pm", ""}, {"20041124 2320", ""},
	{"1h30m", ""}, {"3days", ""}, {"@ 17 22:00", ""}, {"@ May 18", "@ May 18 12:00"}, {"@11pm", ""},
	{"@ Sat May 17 21:22:42.060877 1997", "@ Sat May 17 21:27:42 1997"}, {"@ 12:00", "-1h"},
	{"1997-05-18 09:00", "1997-05-18 10:00"}, {"2 hours ago", ""}, {"", "1 day ago"}, {"+0.002795", ""},
	{"+60.057537", "+60.057537"}, {"+1e-6", ""}, {"-0", ""}, {"@2004", ""},
}

// TestWindowMatchesPmdumplog runs pmdumplog -S/-T and checks that the
// records it prints are exactly those in ParseWindow's window: the first
// record at or after Start, through the last at or before End.
func TestWindowMatchesPmdumplog(t *testing.T) {
	env := pcpEnv()
	for _, c := range []struct {
		archive, metric string // the metric filter keeps pmdumplog fast
		zargs           [][]string
	}{
		{"20041125", "kernel.all.load", [][]string{{"-z"}, {"-Z", "Australia/Melbourne"}, {"-Z", "EST5EDT"}}},
		{"rattle", "", [][]string{{"-z"}, {"-Z", "Australia/Melbourne"}}},
		{"omnibus_v3", "", [][]string{{"-z"}}},
	} {
		for _, zarg := range c.zargs {
			t.Run(c.archive+strings.Join(zarg, ""), func(t *testing.T) {
				t.Parallel()
				windowRecords(t, env, c.archive, c.metric, zarg)
			})
		}
	}
}

func windowRecords(t *testing.T, env []string, a, metric string, zarg []string) {
	path := needArchive(t, a)
	l := parseDumpedLabel(t, pcpRun(t, env, "pmdumplog", "-z", "-L", "-xxx", path))
	var filter []string
	if metric != "" {
		filter = []string{metric}
	}
	all := recordStamps(t, pcpRun(t, env, "pmdumplog", append([]string{"-xxx", path}, filter...)...))
	{
		{
			var loc *time.Location
			if zarg[0] == "-z" {
				loc, _ = ZoneForLabel(l.tz, l.zoneinfo)
			} else {
				loc, _ = NewZone(zarg[1])
			}
			for _, sp := range toolWindowSpecs {
				args := append([]string{}, zarg...)
				if sp[0] != "" {
					args = append(args, "-S", sp[0])
				}
				if sp[1] != "" {
					args = append(args, "-T", sp[1])
				}
				args = append(append(args, "-xxx", path), filter...)
				bin := needTool(t, "pmdumplog")
				cmd := exec.Command(bin, args...)
				cmd.Env = env
				out, runErr := cmd.Output()
				w, err := ParseWindow(sp[0], sp[1], "", "", l.start, l.end, loc)
				if (runErr != nil) != (err != nil) {
					t.Errorf("%s %q -S %q -T %q: pmdumplog error %v, ParseWindow error %v", a, zarg, sp[0], sp[1], runErr, err)
					continue
				}
				if err != nil {
					continue
				}
				got := recordStamps(t, string(out))
				var want []stream.Timestamp
				for _, ts := range all {
					if !ts.Before(w.Start) && !ts.After(w.End) {
						want = append(want, ts)
					}
				}
				if len(got) == 0 && w.Start == l.end {
					// libpcp quirk, not a window one: positioning exactly
					// at the final temporal index entry of 20041125 (which
					// points past the last record) reads nothing. The same
					// instant less a nanosecond prints the last record.
					continue
				}
				if len(got) != len(want) || len(got) > 0 && (got[0] != want[0] || got[len(got)-1] != want[len(want)-1]) {
					t.Errorf("%s %q -S %q -T %q: window %v..%v selects %d records %s, pmdumplog printed %d %s",
						a, zarg, sp[0], sp[1], w.Start, w.End, len(want), span(want), len(got), span(got))
				}
			}
		}
	}
}

func span(ts []stream.Timestamp) string {
	if len(ts) == 0 {
		return "[]"
	}
	return "[" + ts[0].String() + " .. " + ts[len(ts)-1].String() + "]"
}

func recordStamps(t *testing.T, out string) []stream.Timestamp {
	var ts []stream.Timestamp
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := recordXRE.FindStringSubmatch(sc.Text()); m != nil {
			ts = append(ts, stamp(t, m[4], m[2]))
		}
	}
	return ts
}

// TestWindowMatchesPmlogsummary compares the window pmlogsummary -l prints
// (to the millisecond) with ParseWindow and FormatDate.
func TestWindowMatchesPmlogsummary(t *testing.T) {
	env := pcpEnv()
	for _, a := range []string{"20041125", "rattle"} {
		path := needArchive(t, a)
		l := parseDumpedLabel(t, pcpRun(t, env, "pmdumplog", "-z", "-L", "-xxx", path))
		for _, zarg := range [][]string{{"-z"}, {"-Z", "NZST-12NZDT,M9.5.0,M4.1.0/3"}} {
			var loc *time.Location
			if zarg[0] == "-z" {
				loc, _ = ZoneForLabel(l.tz, l.zoneinfo)
			} else {
				loc, _ = NewZone(zarg[1])
			}
			for _, sp := range toolWindowSpecs {
				args := append([]string{"-l"}, zarg...)
				if sp[0] != "" {
					args = append(args, "-S", sp[0])
				}
				if sp[1] != "" {
					args = append(args, "-T", sp[1])
				}
				args = append(args, path, "hinv.ncpu")
				bin := needTool(t, "pmlogsummary")
				cmd := exec.Command(bin, args...)
				cmd.Env = env
				out, runErr := cmd.Output()
				w, err := ParseWindow(sp[0], sp[1], "", "", l.start, l.end, loc)
				if runErr != nil || err != nil {
					if (runErr != nil) != (err != nil) {
						t.Errorf("%s %q -S %q -T %q: pmlogsummary error %v, ParseWindow error %v", a, zarg, sp[0], sp[1], runErr, err)
					}
					continue
				}
				want := "  commencing " + FormatDate(w.Start, loc, Millis) + "\n" +
					"  ending     " + FormatDate(w.End, loc, Millis) + "\n"
				if !strings.Contains(string(out), want) {
					t.Errorf("%s %q -S %q -T %q: pmlogsummary printed\n%s\nwant\n%s", a, zarg, sp[0], sp[1], out, want)
				}
			}
		}
	}
}
