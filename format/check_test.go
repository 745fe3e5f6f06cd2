package format

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pcptools/pcptools/internal/fuzzdir"
	"github.com/pcptools/pcptools/stream"
)

const checkQARoot = "/var/lib/pcp/testsuite"

// needCheckQA returns the QA fixture directory, failing under CI and skipping
// elsewhere when it is not installed.
func needCheckQA(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(checkQARoot, "archives")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PCP QA archives missing: %v", err)
		}
		t.Skipf("PCP QA archives not installed: %v", err)
	}
	return checkQARoot
}

// pmlogcheckVerdicts is what PCP 6.0.3's pmlogcheck said about every QA
// archive (run once per archive, without options): "flagged" when it
// printed anything or exited non-zero (pmlogcheck exits 0 after most
// findings; its -v adds only progress lines and counts), "clean" otherwise.
// Check must flag (a Warning or an Error) exactly the flagged ones. The
// third column says what pmlogcheck complained about: label (bad magic or
// version: the v1 archives), framing (truncation, length mismatch), no data
// (label-only files), no .meta, meta record type (v2/v3 mix), libpcp open
// (pmNewContext failed), no index, index (pass 1), index volume (a volume
// the index names is missing), descriptor (pass 2: units, domains), data
// time, no descriptor, valfmt, value (pmExtractValue), wraps.
//
// To re-derive it: PCPTOOLS_PMLOGCHECK_LIVE=1 go test -run QAArchivesLive.
const pmlogcheckVerdicts = `
	clean   archives/19970807.09.54
	clean   archives/19970807.09.59
	clean   archives/20041125
	clean   archives/20071023-08-06-36
	flagged archives/20101004-trunc                             descriptor
	flagged archives/20130706                                   descriptor, wraps
	flagged archives/20150105.17.57                             descriptor
	flagged archives/20150105.17.57-00                          descriptor
	clean   archives/20180102
	clean   archives/20180127.08.40
	clean   archives/20180415.09.16
	flagged archives/20180416.10.00                             wraps
	clean   archives/20180606
	clean   archives/20190628.04.03
	clean   archives/20190628.06.31
	flagged archives/20201109                                   wraps
	clean   archives/540117-short
	clean   archives/541380_v2
	clean   archives/573184
	clean   archives/951127.23.01_v2
	flagged archives/960624.08.17_v2                            wraps
	flagged archives/YWhcCi.toium                               descriptor
	clean   archives/ac15
	clean   archives/ace_v2
	clean   archives/all-irix-6.5.25
	flagged archives/all-sles9-sp1                              descriptor
	clean   archives/arch_a
	clean   archives/arch_b
	clean   archives/archive-goodred-20150417
	clean   archives/babylon.percpu_v2
	flagged archives/babylon.pmview_v2                          wraps
	clean   archives/bad-derived
	flagged archives/bigace_v2                                  wraps
	flagged archives/binning                                    index
	flagged archives/bozo-20170904                              wraps
	flagged archives/bozo-disk                                  descriptor
	flagged archives/bozo.client_v2                             wraps
	clean   archives/bug-1044
	flagged archives/bug1057                                    descriptor
	clean   archives/bug_v2
	clean   archives/cgroups-units
	clean   archives/changeinst
	flagged archives/chartqa1                                   index, wraps
	clean   archives/conn20070309
	clean   archives/count-mark
	clean   archives/coverage
	clean   archives/cputime
	clean   archives/daily_report
	clean   archives/diff1
	clean   archives/diff2
	flagged archives/dm-io                                      wraps
	clean   archives/dm-stats
	clean   archives/dstat-diskfarm
	clean   archives/dstat-disks
	clean   archives/dupname-a
	clean   archives/dupname-b
	clean   archives/dupname-c
	clean   archives/dyninsts
	clean   archives/dyninsts2
	clean   archives/dynmetric
	clean   archives/eventrec
	clean   archives/eventrec-old
	clean   archives/fcsw_indom
	clean   archives/foo+
	clean   archives/gap
	clean   archives/gap2
	clean   archives/gmt-boring
	clean   archives/instant-1
	clean   archives/instant-base
	flagged archives/interpmark                                 descriptor
	clean   archives/iopct
	flagged archives/kenj-pc-1                                  descriptor
	flagged archives/kenj-pc-2                                  wraps
	clean   archives/kenj-pc-diskstat
	clean   archives/late
	flagged archives/log-derived                                descriptor
	clean   archives/mark-bug
	clean   archives/mark_no_mark_0
	clean   archives/mark_no_mark_1
	clean   archives/mark_no_mark_2
	clean   archives/mark_no_mark_3
	clean   archives/mark_no_mark_4
	clean   archives/markmerge
	clean   archives/mirage
	clean   archives/mirage-1
	clean   archives/mirage-2
	clean   archives/mirage-3
	clean   archives/mmv.help
	clean   archives/moomba.client
	clean   archives/moomba.pmkstat
	flagged archives/multi-corrupted/20150508.11.44             descriptor
	flagged archives/multi-corrupted/20150508.11.46             descriptor
	flagged archives/multi-corrupted/20150508.11.50             framing
	flagged archives/multi-corrupted/20150508.11.57             descriptor
	flagged archives/multi-vm00                                 descriptor
	flagged archives/multi-vm01                                 descriptor
	flagged archives/multi-vm02                                 descriptor
	flagged archives/multi-vm03                                 descriptor
	flagged archives/multi-xz-1k/20150508.11.44                 descriptor
	flagged archives/multi-xz-1k/20150508.11.46                 descriptor
	flagged archives/multi-xz-1k/20150508.11.50                 descriptor
	flagged archives/multi-xz-1k/20150508.11.57                 descriptor
	flagged archives/multi-xz/20150508.11.44                    descriptor
	flagged archives/multi-xz/20150508.11.46                    descriptor
	flagged archives/multi-xz/20150508.11.50                    descriptor
	flagged archives/multi-xz/20150508.11.57                    descriptor
	flagged archives/multi/20150508.11.44                       descriptor
	flagged archives/multi/20150508.11.46                       descriptor
	flagged archives/multi/20150508.11.50                       descriptor
	flagged archives/multi/20150508.11.57                       descriptor
	clean   archives/mysql-1
	clean   archives/naslog
	clean   archives/new_mysql
	clean   archives/new_snmp
	clean   archives/new_tcp
	clean   archives/nfsclient_32
	clean   archives/nfsclient_64
	clean   archives/node_archive
	flagged archives/numa                                       descriptor
	clean   archives/ok-bigbin
	clean   archives/ok-foo
	clean   archives/ok-interp
	clean   archives/ok-mv-bar
	clean   archives/ok-mv-bigbin
	clean   archives/ok-mv-foo
	clean   archives/ok-mv-interp
	flagged archives/ok-noti-bigbin                             no index
	flagged archives/ok-noti-interp                             no index
	clean   archives/old_xfs
	clean   archives/omen.client
	clean   archives/omnibus-nomark_v2
	clean   archives/omnibus-nomark_v3
	clean   archives/omnibus_v2
	clean   archives/omnibus_v3
	clean   archives/oview-short
	flagged archives/pcp-atop                                   descriptor, wraps
	clean   archives/pcp-atop-boot
	clean   archives/pcp-atop-log
	clean   archives/pcp-atop-nvidia
	clean   archives/pcp-atop-threads
	clean   archives/pcp-dstat
	clean   archives/pcp-free
	flagged archives/pcp-free-tera                              wraps
	clean   archives/pcp-hotatop
	clean   archives/pcp-ipcs
	clean   archives/pcp-mpstat
	clean   archives/pcp-mpstat2
	clean   archives/pcp-mpstat3
	clean   archives/pcp-numastat-1-node
	clean   archives/pcp-pidstat
	flagged archives/pcp-pidstat-process-args                   wraps
	clean   archives/pcp-pidstat-process-states
	clean   archives/pcp-pidstat-timezone
	clean   archives/pcp-pidstat_missing_one_metric
	clean   archives/pcp-ps
	clean   archives/pcp-shping
	flagged archives/pcp-ss                                     wraps
	flagged archives/pcp-tapestat-archive                       descriptor
	clean   archives/pcp-uptime
	clean   archives/pcp-uptime2
	clean   archives/pcp-verify
	clean   archives/pcp-vmstat
	clean   archives/pcp-zeroconf
	clean   archives/pcpcmd
	clean   archives/pmatop-log
	flagged archives/pmiostat_mark                              descriptor, wraps
	clean   archives/pmproxy
	flagged archives/proc                                       descriptor
	clean   archives/procpid-encode
	clean   archives/procpid-encode2
	clean   archives/procsched
	flagged archives/pyapi                                      descriptor, wraps
	flagged archives/rank-pred                                  wraps
	clean   archives/rattle
	flagged archives/reduce-1                                   wraps
	flagged archives/reduce-2                                   wraps
	flagged archives/rep                                        descriptor
	clean   archives/rewrite
	clean   archives/runq
	clean   archives/sample-labels
	clean   archives/sample-secs
	clean   archives/sample_expr
	clean   archives/schizo-A
	clean   archives/schizo-B
	clean   archives/section-a
	flagged archives/section-b                                  descriptor
	clean   archives/section-c
	clean   archives/section-d
	clean   archives/simple-nvme
	clean   archives/small
	clean   archives/snort-disks
	flagged archives/spotinstance                               wraps
	clean   archives/src-rattle
	clean   archives/src-snort-disks
	clean   archives/src-vldb-disks
	clean   archives/tricky_4_507
	clean   archives/tzchange-10-a
	clean   archives/tzchange-10-b
	clean   archives/tzchange-11-a
	clean   archives/tzchange-11-b
	clean   archives/tzchange-12-a
	clean   archives/tzchange-12-b
	flagged archives/uwrap                                      wraps
	clean   archives/value-test
	clean   archives/viewqa1
	clean   archives/viewqa2
	clean   archives/viewqa3
	clean   archives/vldb-disks
	flagged archives/wrap                                       wraps
	clean   archives/xbug1
	clean   archives/zero_disk_activity
	flagged badarchives/20180608.04.23-01                       index
	flagged badarchives/541380                                  label
	flagged badarchives/951127.23.01                            label
	flagged badarchives/960624.08.17                            label
	flagged badarchives/ace                                     label, framing
	flagged badarchives/archive-20141125-000009                 descriptor, valfmt, wraps
	flagged badarchives/archive-20150417.131733                 framing
	flagged badarchives/babylon.percpu                          label
	flagged badarchives/babylon.pmview                          label
	clean   badarchives/badlabel-0
	flagged badarchives/badlabel-1                              label, libpcp open
	flagged badarchives/badlabel-2                              label
	clean   badarchives/badlen-0
	flagged badarchives/badlen-1                                framing
	flagged badarchives/badlen-10                               framing
	flagged badarchives/badlen-11                               framing
	flagged badarchives/badlen-2                                framing
	flagged badarchives/badlen-3                                framing
	flagged badarchives/badlen-4                                framing
	flagged badarchives/badlen-5                                framing
	flagged badarchives/badlen-6                                framing
	flagged badarchives/badlen-7                                framing
	flagged badarchives/badlen-8                                label
	flagged badarchives/badlen-9                                framing
	flagged badarchives/badlog-1                                framing
	flagged badarchives/badlog-2                                wraps
	flagged badarchives/badlog-3                                data time
	flagged badarchives/badlog-4                                data time
	flagged badarchives/badmeta-1                               index, no descriptor
	flagged badarchives/badmeta-2                               descriptor
	flagged badarchives/badmeta-3                               libpcp open
	flagged badarchives/badmeta-4                               libpcp open
	flagged badarchives/badmeta-5                               libpcp open
	flagged badarchives/badmeta-6                               meta record type
	flagged badarchives/badmeta-7                               meta record type
	flagged badarchives/badti-1                                 framing
	flagged badarchives/badti-2                                 index
	flagged badarchives/badti-3                                 index, index volume
	flagged badarchives/badti-4                                 index
	flagged badarchives/bigace                                  label
	flagged badarchives/bozo-vm-disk                            descriptor
	flagged badarchives/bozo.client                             label
	flagged badarchives/bozo.client_v2.meta.bad                 framing, no .meta
	flagged badarchives/bug                                     label
	flagged badarchives/corrupted_labelset                      framing
	flagged badarchives/empty                                   no data, libpcp open
	flagged badarchives/err_v1                                  label
	flagged badarchives/logsummary-bug                          value
	flagged badarchives/ok-truncbin                             framing
	flagged badarchives/old611                                  descriptor
`

// checkDisagreements lists QA archives on which Check and pmlogcheck are
// meant to differ, with the reason. There are none: every difference found
// so far (see TestCheckMutations) needs damage that no QA archive has.
var checkDisagreements = map[string]string{}

var checkArchiveFileRE = regexp.MustCompile(`\.(meta|index|[0-9]+)(\.(xz|lzma|bz2|bz|gz|Z|z|zst))?$`)

// checkQAArchives lists every archive (by base path, relative to checkQARoot) in the
// QA archive directories, the multi* subdirectories of archives included.
func checkQAArchives(t testing.TB, root string) []string {
	t.Helper()
	dirs := []string{"archives", "badarchives"}
	ents, err := os.ReadDir(filepath.Join(root, "archives"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "multi") {
			dirs = append(dirs, "archives/"+e.Name())
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range dirs {
		ents, err := os.ReadDir(filepath.Join(root, d))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.IsDir() {
				continue
			}
			loc := checkArchiveFileRE.FindStringIndex(e.Name())
			if loc == nil || loc[0] == 0 {
				continue
			}
			name := d + "/" + e.Name()[:loc[0]]
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

type checkVerdict struct {
	flagged bool
	why     string
}

func parseCheckVerdicts(t testing.TB) map[string]checkVerdict {
	t.Helper()
	m := map[string]checkVerdict{}
	for _, line := range strings.Split(pmlogcheckVerdicts, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 2 || (f[0] != "flagged" && f[0] != "clean") {
			t.Fatalf("bad checkVerdict line %q", line)
		}
		m[f[1]] = checkVerdict{f[0] == "flagged", strings.Join(f[2:], " ")}
	}
	return m
}

// checkEach runs fn on items with a small pool of workers.
func checkEach(items []string, fn func(string)) {
	workers := min(runtime.GOMAXPROCS(0), 4)
	ch := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range ch {
				fn(it)
			}
		}()
	}
	for _, it := range items {
		ch <- it
	}
	close(ch)
	wg.Wait()
}

// checkBigQA are the QA archives that take seconds of CPU to check (hundreds
// of MB of xz); they are checked only with PCPTOOLS_QA_FULL=1.
var checkBigQA = map[string]bool{"archives/20180416.10.00": true, "archives/pcp-pidstat-process-args": true}

// TestCheckQAArchives checks every QA archive and compares the checkVerdict
// with pmlogcheck's.
func TestCheckQAArchives(t *testing.T) {
	root := needCheckQA(t)
	verdicts := parseCheckVerdicts(t)
	names := checkQAArchives(t, root)
	for _, n := range names {
		if _, ok := verdicts[n]; !ok {
			t.Errorf("%s: no pmlogcheck checkVerdict recorded (a new QA archive?)", n)
		}
	}
	var todo []string
	for _, n := range names {
		if checkBigQA[n] && (testing.Short() || os.Getenv("PCPTOOLS_QA_FULL") == "") {
			continue
		}
		todo = append(todo, n)
	}
	var mu sync.Mutex
	start := time.Now()
	checkEach(todo, func(n string) {
		findings, err := Check(filepath.Join(root, n), CheckOptions{Location: time.UTC})
		got := err != nil || Flagged(findings)
		v := verdicts[n]
		mu.Lock()
		defer mu.Unlock()
		if why, ok := checkDisagreements[n]; ok {
			if got == v.flagged {
				t.Errorf("%s: listed as a disagreement (%s) but Check now agrees with pmlogcheck", n, why)
			}
			return
		}
		if got != v.flagged {
			var sb strings.Builder
			if err != nil {
				fmt.Fprintf(&sb, "error: %v\n", err)
			}
			FormatFindings(&sb, findings)
			t.Errorf("%s: Check flagged=%v, pmlogcheck flagged=%v (%s); findings:\n%s", n, got, v.flagged, v.why, sb.String())
		}
	})
	t.Logf("checked %d archives in %v", len(todo), time.Since(start))
}

// pmlogcheckProg returns the pmlogcheck binary, or skips.
func pmlogcheckProg(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("pmlogcheck")
	if err != nil {
		t.Skip("pmlogcheck not installed")
	}
	return p
}

// runPmlogcheck runs pmlogcheck (in UTC) and says whether it complained,
// with what it printed.
func runPmlogcheck(t testing.TB, prog, archive string, args ...string) (bool, string) {
	t.Helper()
	cmd := exec.Command(prog, append(args, archive)...)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("pmlogcheck: %v", err)
	}
	return err != nil || stderr.Len() > 0, stderr.String()
}

// TestCheckQAArchivesLive re-runs pmlogcheck on every QA archive and
// compares with the recorded verdicts. It takes minutes, so it runs only
// when asked (PCPTOOLS_PMLOGCHECK_LIVE=1).
func TestCheckQAArchivesLive(t *testing.T) {
	if os.Getenv("PCPTOOLS_PMLOGCHECK_LIVE") == "" {
		t.Skip("set PCPTOOLS_PMLOGCHECK_LIVE=1 to run pmlogcheck on every QA archive")
	}
	root := needCheckQA(t)
	prog := pmlogcheckProg(t)
	verdicts := parseCheckVerdicts(t)
	var mu sync.Mutex
	checkEach(checkQAArchives(t, root), func(n string) {
		got, _ := runPmlogcheck(t, prog, filepath.Join(root, n))
		mu.Lock()
		defer mu.Unlock()
		if v, ok := verdicts[n]; !ok || v.flagged != got {
			state := "clean"
			if got {
				state = "flagged"
			}
			t.Errorf("pmlogcheck now says: %-8s%s", state, n)
		}
	})
}

// pmlogcheckWrapRE matches one counter wrap report of pmlogcheck.
var pmlogcheckWrapRE = regexp.MustCompile(`(?m)^\S+:\[([0-9:. A-Za-z]+)\]: (.+): (\S+ \S+) wrap\n\tvalue (\S+) at ([^\n]+)\n\tvalue (\S+) at ([^\n]+)$`)

// pmlogcheckWraps turns pmlogcheck's wrap reports into Check's messages.
func pmlogcheckWraps(out string) []string {
	var ws []string
	for _, m := range pmlogcheckWrapRE.FindAllStringSubmatch(out, -1) {
		ws = append(ws, fmt.Sprintf("[%s] %s: %s wrap: value %s at %s, then %s at %s", m[1], m[2], m[3], m[4], m[5], m[6], m[7]))
	}
	return ws
}

func checkWrapMsgs(findings []Finding) []string {
	var ws []string
	for _, f := range findings {
		if strings.Contains(f.Msg, " wrap: ") {
			ws = append(ws, f.Msg)
		}
	}
	return ws
}

// TestCheckWraps compares counter wrap reports, message by message, with
// what pmlogcheck printed (recorded for "wrap"; live for more archives
// when pmlogcheck is installed).
func TestCheckWraps(t *testing.T) {
	root := needCheckQA(t)
	findings, err := Check(filepath.Join(root, "archives/wrap"), CheckOptions{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"[05:08:21.284] sample.wrap.long: signed 32-bit wrap: value 2147483596 at 05:08:20.284, then -1073741878 at 05:08:21.284",
		"[05:08:25.283] sample.wrap.long: signed 32-bit wrap: value 2147483588 at 05:08:24.283, then -1073741886 at 05:08:25.283",
	}
	if got := checkWrapMsgs(findings); !slices.Equal(got, want) {
		t.Errorf("wrap: got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range findings {
		if f.Severity == Warning && f.File != filepath.Join(root, "archives/wrap.0") {
			t.Errorf("wrap finding names file %s", f.File)
		}
	}
	findings, _ = Check(filepath.Join(root, "archives/wrap"), CheckOptions{Location: time.UTC, NoWrap: true})
	if Flagged(findings) {
		t.Errorf("wrap with NoWrap is flagged: %v", findings)
	}

	prog := pmlogcheckProg(t)
	// Integer counters of all sizes, instance names, a v2 archive with
	// little-endian 64-bit values, several volumes, <mark> records.
	for _, n := range []string{"archives/wrap", "archives/uwrap", "archives/kenj-pc-2", "archives/bozo.client_v2",
		"archives/960624.08.17_v2", "archives/rank-pred", "archives/reduce-1", "archives/babylon.pmview_v2",
		"archives/spotinstance", "archives/bigace_v2", "archives/dm-io"} {
		_, out := runPmlogcheck(t, prog, filepath.Join(root, n))
		findings, err := Check(filepath.Join(root, n), CheckOptions{Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		want, got := pmlogcheckWraps(out), checkWrapMsgs(findings)
		if len(want) == 0 {
			t.Errorf("%s: pmlogcheck reported no wraps", n)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d wraps, pmlogcheck %d; first difference:\n%s", n, len(got), len(want), checkFirstDiff(got, want))
		}
	}
}

func checkFirstDiff(a, b []string) string {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("  got  %q\n  want %q", x, y)
		}
	}
	return ""
}

// TestCheckVerbose checks the counts pass 3 reports against pmlogcheck -v's
// ("Processed 38 pmResult records", "Processed 2 <mark> records").
func TestCheckVerbose(t *testing.T) {
	root := needCheckQA(t)
	for _, c := range []struct {
		name string
		want string
	}{
		{"archives/20041125", "processed 50 result records, 0 of them <mark> records"},
		{"archives/omnibus_v3", "processed 38 result records, 2 of them <mark> records"},
	} {
		findings, err := Check(filepath.Join(root, c.name), CheckOptions{Verbose: true})
		if err != nil {
			t.Fatal(err)
		}
		if Flagged(findings) {
			t.Errorf("%s: flagged", c.name)
		}
		var infos []string
		for _, f := range findings {
			if f.Severity == Info {
				infos = append(infos, f.Msg)
			}
		}
		if !slices.Contains(infos, c.want) {
			t.Errorf("%s: no %q among %q", c.name, c.want, infos)
		}
	}
}

// TestCheckWindow checks that Start and End bound pass 3.
func TestCheckWindow(t *testing.T) {
	root := needCheckQA(t)
	name := filepath.Join(root, "archives/wrap")
	all, _ := Check(name, CheckOptions{Location: time.UTC})
	if n := len(checkWrapMsgs(all)); n != 2 {
		t.Fatalf("%d wraps", n)
	}
	// The first wrap is at 05:08:21.284, the second at 05:08:25.283.
	l := checkLabelOf(t, name+".meta")
	at := func(hms string) *stream.Timestamp {
		d, err := time.Parse("15:04:05.000", hms)
		if err != nil {
			t.Fatal(err)
		}
		start := l.Start.Time()
		tm := time.Date(start.Year(), start.Month(), start.Day(), d.Hour(), d.Minute(), d.Second(), d.Nanosecond(), time.UTC)
		ts := stream.FromTime(tm)
		return &ts
	}
	for _, c := range []struct {
		start, end string
		wraps      int
	}{
		{"", "05:08:21.000", 0},
		{"", "05:08:22.000", 1},
		{"05:08:21.000", "", 1},
		{"05:08:20.000", "05:08:22.000", 1},
		{"05:08:22.000", "", 1}, // the value at 05:08:24 is the new baseline
		{"05:08:25.000", "", 0},
	} {
		var o CheckOptions
		o.Location = time.UTC
		if c.start != "" {
			o.Start = at(c.start)
		}
		if c.end != "" {
			o.End = at(c.end)
		}
		fs, _ := Check(name, o)
		if n := len(checkWrapMsgs(fs)); n != c.wraps {
			t.Errorf("window [%s, %s]: %d wraps, want %d", c.start, c.end, n, c.wraps)
		}
	}
}

func checkLabelOf(t testing.TB, path string) stream.Label {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := DecodeLabel(b)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestCheckNames checks that an archive can be named by its base or by any
// of its files, compressed or not.
func TestCheckNames(t *testing.T) {
	root := needCheckQA(t)
	a := filepath.Join(root, "archives")
	// A gzipped copy of ok-foo.0.
	tmp := t.TempDir()
	checkCopyArchive(t, root, "ok-foo", tmp)
	b, err := os.ReadFile(filepath.Join(tmp, "ok-foo.0"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(b)
	zw.Close()
	os.Remove(filepath.Join(tmp, "ok-foo.0"))
	if err := os.WriteFile(filepath.Join(tmp, "ok-foo.0.gz"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{
		{"20041125", "20041125.meta", "20041125.index", "20041125.0"},
		{"dstat-disks", "dstat-disks.meta.xz", "dstat-disks.0.xz", "dstat-disks.index", "dstat-disks.meta", "dstat-disks.0"},
		{tmp + "/ok-foo", tmp + "/ok-foo.0.gz", tmp + "/ok-foo.meta"},
	} {
		var want string
		for i, n := range c {
			if !filepath.IsAbs(n) {
				n = filepath.Join(a, n)
			}
			fs, err := Check(n, CheckOptions{Location: time.UTC})
			if err != nil {
				t.Errorf("%s: %v", n, err)
				continue
			}
			var sb strings.Builder
			FormatFindings(&sb, fs)
			if i == 0 {
				want = sb.String()
				if Flagged(fs) {
					t.Errorf("%s: flagged:\n%s", n, want)
				}
			} else if sb.String() != want {
				t.Errorf("%s: findings differ from %s's:\n%s\nwant\n%s", n, c[0], sb.String(), want)
			}
		}
	}
	if _, err := Check(filepath.Join(a, "no-such-archive"), CheckOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing archive: err = %v", err)
	}
}

func TestFormatFindings(t *testing.T) {
	var sb strings.Builder
	err := FormatFindings(&sb, []Finding{
		{File: "a.0", Offset: 132, Pass: 0, Severity: Error, Msg: "record 1: length mismatch: header 20 != trailer 24"},
		{File: "a.index", Offset: -1, Pass: 1, Severity: Warning, Msg: "temporal index is missing"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "a.0: [offset 132] record 1: length mismatch: header 20 != trailer 24\na.index: temporal index is missing\n"
	if sb.String() != want {
		t.Errorf("got %q, want %q", sb.String(), want)
	}
}

// ---------------------------------------------------------------------------
// Damage made on purpose, with what Check and pmlogcheck say about it.

// checkCopyArchive copies the files of a QA archive into dir.
func checkCopyArchive(t testing.TB, root, name, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "archives", name) + ".*")
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: %v", name, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, name)
}

// checkSpan is one framed record of a file: offset and length.
type checkSpan struct{ off, n int }

// checkSpans frames the records of an archive file (label first).
func checkSpans(t testing.TB, b []byte) []checkSpan {
	t.Helper()
	var out []checkSpan
	for off := 0; off+4 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[off:]))
		if n < 8 || off+n > len(b) {
			t.Fatalf("cannot frame record at %d", off)
		}
		out = append(out, checkSpan{off, n})
		off += n
	}
	return out
}

// checkEdit applies fn to the bytes of a file.
func checkEdit(t testing.TB, path string, fn func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fn(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

func checkPut32(b []byte, off int, v uint32) { binary.BigEndian.PutUint32(b[off:], v) }

// checkMetaRecords returns the metadata records of a given type.
func checkMetaRecords(t testing.TB, b []byte, typ uint32) []checkSpan {
	var out []checkSpan
	for _, s := range checkSpans(t, b)[1:] {
		if binary.BigEndian.Uint32(b[s.off+4:]) == typ {
			out = append(out, s)
		}
	}
	return out
}

// checkEachBlock calls fn for every value block of every result of a data
// volume, with the block's offset in the file, until fn returns true.
func checkEachBlock(t testing.TB, b []byte, version int, fn func(off int) bool) {
	base := int(stream.PointerBase(uint8(version)))
	for _, s := range checkSpans(t, b)[1:] {
		body := s.off + DataHeaderSize(version)
		n := int(binary.BigEndian.Uint32(b[body:]))
		pos := body + 4
		for range n {
			numval := int(int32(binary.BigEndian.Uint32(b[pos+4:])))
			if numval <= 0 {
				pos += 8
				continue
			}
			valfmt := binary.BigEndian.Uint32(b[pos+8:])
			for j := range numval {
				if valfmt != 0 {
					w := int(binary.BigEndian.Uint32(b[pos+12+8*j+4:]))
					if fn(body + (w-base)*4) {
						return
					}
				}
			}
			pos += 12 + 8*numval
		}
	}
}

type checkMutation struct {
	name   string
	src    string
	mutate func(t *testing.T, base string)
	opts   CheckOptions
	// want are substrings of findings that must be there, at Warning or
	// Error; none means the archive must not be flagged.
	want []string
	// pmlogcheck is pmlogcheck's checkVerdict where it differs from Check's,
	// with the reason.
	pmlogcheck *bool
	why        string
}

var pmlogcheckClean = new(bool)

func TestCheckMutations(t *testing.T) {
	root := needCheckQA(t)
	cases := []checkMutation{
		{name: "intact v2", src: "ok-foo", mutate: func(*testing.T, string) {}},
		{name: "intact v3", src: "omnibus_v3", mutate: func(*testing.T, string) {}},
		{
			name: "truncated volume", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".0", func(b []byte) []byte { return b[:len(b)-10] })
			},
			want: []string{"truncated: wanted", "the last valid record ends at offset"},
		},
		{
			name: "trailer mismatch", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".0", func(b []byte) []byte {
					s := checkSpans(t, b)[2]
					checkPut32(b, s.off+s.n-4, uint32(s.n+4))
					return b
				})
			},
			want: []string{"record 2: length mismatch: header"},
		},
		{
			name: "truncated index entry", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".index", func(b []byte) []byte { return b[:len(b)-7] })
			},
			want: []string{"index entry 3: truncated: wanted 20 bytes, got 13"},
		},
		{
			name: "no index", src: "ok-foo",
			mutate: func(t *testing.T, base string) { os.Remove(base + ".index") },
			want:   []string{"temporal index is missing"},
		},
		{
			name: "index usec out of range", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".index", func(b []byte) []byte { checkPut32(b, 132+20+4, 1000000); return b })
			},
			want: []string{"entry 2: illegal timestamp nsec value"},
		},
		{
			name: "first index entry inside a record", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".index", func(b []byte) []byte { checkPut32(b, 132+16, 136); return b })
			},
			want: []string{"entry 1: offset to data (136) is not the start of a record in volume 0"},
		},
		{
			name: "v3 record type in a v2 archive", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".meta", func(b []byte) []byte {
					s := checkMetaRecords(t, b, TypeInDomV2)[0]
					checkPut32(b, s.off+4, TypeInDom)
					return b
				})
			},
			want: []string{"unexpected record type INDOM (5) for a v2 archive"},
		},
		{
			name: "unknown metadata record type", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".meta", func(b []byte) []byte {
					return append(b, 0, 0, 0, 12, 0, 0, 0, 99, 0, 0, 0, 12)
				})
			},
			want: []string{"unknown metadata record type 99"},
		},
		{
			name: "descriptor changes type", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".meta", func(b []byte) []byte {
					s := checkMetaRecords(t, b, TypeDesc)[1]
					d := slices.Clone(b[s.off : s.off+s.n])
					checkPut32(d, 12, uint32(stream.Type64))
					return append(b, d...)
				})
			},
			want: []string{"changes type 2, was"},
		},
		{
			name: "no descriptors", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".meta", func(b []byte) []byte {
					out := slices.Clone(b[:132])
					for _, s := range checkSpans(t, b)[1:] {
						if binary.BigEndian.Uint32(b[s.off+4:]) != TypeDesc {
							out = append(out, b[s.off:s.off+s.n]...)
						}
					}
					return out
				})
			},
			want: []string{"no metric descriptors"},
		},
		{
			name: "bad help text type, last record", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".meta", func(b []byte) []byte {
					return append(b, 0, 0, 0, 20, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20)
				})
			},
		},
		{
			name: "bad help text type, not last", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".meta", func(b []byte) []byte {
					ss := checkSpans(t, b)
					last := slices.Clone(b[ss[len(ss)-1].off:])
					b = append(b, 0, 0, 0, 20, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20)
					return append(b, last...)
				})
			},
			want: []string{"help text record of unknown type 0x0, ignored by libpcp, and it is not the last record"},
		},
		{
			name: "label volume field", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".0", func(b []byte) []byte { checkPut32(b, 20, 7); return b })
			},
			want: []string{"label volume field is 7, expected 0"},
		},
		{
			name: "label host differs", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".index", func(b []byte) []byte { b[24] ^= 0x20; return b })
			},
			want: []string{`label host "Gonzo" differs from host "gonzo"`},
		},
		{
			name: "label-only second volume", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				b, _ := os.ReadFile(base + ".0")
				l := slices.Clone(b[:132])
				checkPut32(l, 20, 1)
				os.WriteFile(base+".1", l, 0o644)
			},
			want: []string{"contains no PCP data (nothing after the label)"},
		},
		{
			name: "label-only metadata", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".meta", func(b []byte) []byte { return b[:132] })
			},
			want: []string{"contains no PCP data (nothing after the label); PCP cannot open the archive"},
		},
		{
			name: "bad value pointer", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".0", func(b []byte) []byte {
					checkEachBlock(t, b, 2, func(off int) bool {
						b[off+1] = 0xff // value block length
						return true
					})
					return b
				})
			},
			want: []string{"corrupted data record", "value block length"},
		},
		{
			name: "time goes backwards", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".0", func(b []byte) []byte {
					ss := checkSpans(t, b)
					copy(b[ss[4].off+4:ss[4].off+12], b[ss[2].off+4:ss[2].off+12])
					return b
				})
			},
			want: []string{"timestamp went backwards, prior timestamp"},
		},
		{
			name: "counter wraps", src: "wrap", opts: CheckOptions{Location: time.UTC},
			mutate: func(*testing.T, string) {},
			want:   []string{"sample.wrap.long: signed 32-bit wrap"},
		},
		{
			name: "counter wraps, not reported", src: "wrap", opts: CheckOptions{NoWrap: true},
			mutate: func(*testing.T, string) {},
		},
		{
			name: "value format changes", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				// sample.seconds (U32, insitu) is sent as a value block in its
				// second record: a record libpcp decodes, but a change of
				// value format.
				checkEdit(t, base+".0", func(b []byte) []byte {
					found := 0
					for _, s := range checkSpans(t, b)[1:] {
						body := s.off + 12
						n := int(binary.BigEndian.Uint32(b[body:]))
						pos := body + 4
						for range n {
							numval := int(int32(binary.BigEndian.Uint32(b[pos+4:])))
							if numval <= 0 {
								pos += 8
								continue
							}
							if binary.BigEndian.Uint32(b[pos:]) == uint32(stream.NewPMID(29, 0, 2)) {
								if found++; found == 2 {
									rec := slices.Clone(b[s.off : s.off+s.n-4])
									bodyLen := len(rec) - 12
									checkPut32(rec, pos-s.off+8, stream.ValDptr)
									checkPut32(rec, pos-s.off+16, uint32(int(stream.PointerBase(2))+bodyLen/4))
									rec = binary.BigEndian.AppendUint32(rec, uint32(stream.TypeU32)<<24|8)
									rec = append(rec, b[pos+16:pos+20]...)
									rec = binary.BigEndian.AppendUint32(rec, uint32(len(rec)+4))
									checkPut32(rec, 0, uint32(len(rec)))
									return slices.Concat(b[:s.off], rec, b[s.off+s.n:])
								}
							}
							pos += 12 + 8*numval
						}
					}
					t.Fatal("sample.seconds not found twice")
					return b
				})
			},
			want: []string{"sample.seconds: value format 1, not 0 as in earlier records"},
		},

		// Damage that pmlogcheck misses.
		{
			name: "timestamp past the end", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".0", func(b []byte) []byte {
					ss := checkSpans(t, b)
					checkPut32(b, ss[2].off+4, binary.BigEndian.Uint32(b[ss[2].off+4:])+3600)
					return b
				})
			},
			want:       []string{"timestamp went backwards"},
			pmlogcheck: pmlogcheckClean,
			why:        "pmlogcheck stops pass 3, silently, at the first record after the last record's time",
		},
		{
			name: "index usec far out of range", src: "ok-foo",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".index", func(b []byte) []byte { checkPut32(b, 132+20+4, 0x40000000); return b })
			},
			want:       []string{"entry 2: illegal timestamp nsec value"},
			pmlogcheck: pmlogcheckClean,
			why:        "pmlogcheck multiplies usec by 1000 in 32 bits, and the product wraps into range",
		},
		{
			name: "delta instance domain first", src: "omnibus_v3",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".meta", func(b []byte) []byte {
					s := checkMetaRecords(t, b, TypeInDomDelta)[0]
					checkPut32(b, s.off+8+12, uint32(stream.NewInDomID(29, 999)))
					return b
				})
			},
			want:       []string{"instance domain 29.999: delta record before any full record"},
			pmlogcheck: pmlogcheckClean,
			why:        "libpcp loads it; it complains (\"no full indom record\") only when asked for that domain",
		},
		{
			// F7 of the hostile campaign (docs/reliability.md): PCP's own
			// delta rule writes a delta against an empty full record, and
			// libpcp resolves it; --check called it an error.
			name: "delta after an empty full record (F7)", src: "omnibus_v3",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".meta", func(b []byte) []byte {
					delta := checkMetaRecords(t, b, TypeInDomDelta)[0]
					dom := binary.BigEndian.Uint32(b[delta.off+8+12:])
					for _, s := range checkMetaRecords(t, b, TypeInDom) {
						if s.off < delta.off && binary.BigEndian.Uint32(b[s.off+8+12:]) == dom {
							checkPut32(b, s.off+8+16, 0) // no instances
						}
					}
					return b
				})
			},
			pmlogcheck: pmlogcheckClean,
			why:        "an empty full record, then a delta against it, as pmlogextract writes them",
		},
		{
			name: "event parameter overruns its block", src: "eventrec",
			mutate: func(t *testing.T, base string) {
				checkEdit(t, base+".0", func(b []byte) []byte {
					checkEachBlock(t, b, 2, func(off int) bool {
						if b[off] != byte(stream.TypeEvent) || binary.BigEndian.Uint32(b[off+4:]) == 0 {
							return false
						}
						if binary.BigEndian.Uint32(b[off+8+12:]) == 0 { // first record's nparams
							return false
						}
						p := off + 8 + 16 // first parameter
						checkPut32(b, p+4, binary.BigEndian.Uint32(b[p+4:])|0xff00)
						return true
					})
					return b
				})
			},
			want:       []string{"event record 0: parameter 0 of length"},
			pmlogcheck: pmlogcheckClean,
			why:        "libpcp walks event records without bounds checks: it reads out of bounds, and may crash",
		},
	}
	prog, _ := exec.LookPath("pmlogcheck")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "pcpcheck")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			base := checkCopyArchive(t, root, c.src, dir)
			c.mutate(t, base)
			findings, err := Check(base, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			FormatFindings(&sb, findings)
			var flagged []string
			for _, f := range findings {
				if f.Severity >= Warning {
					flagged = append(flagged, f.Msg)
				}
			}
			all := strings.Join(flagged, "\n")
			if len(c.want) == 0 && Flagged(findings) {
				t.Errorf("flagged:\n%s", sb.String())
			}
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("no finding says %q; findings:\n%s", w, sb.String())
				}
			}
			if prog == "" {
				return
			}
			var args []string
			if c.opts.NoWrap {
				args = append(args, "-w")
			}
			plc, out := runPmlogcheck(t, prog, base, args...)
			want := len(c.want) > 0
			if c.pmlogcheck != nil {
				want = *c.pmlogcheck
			}
			if plc != want {
				t.Errorf("pmlogcheck flagged=%v, expected %v; it said:\n%s", plc, want, out)
			}
		})
	}
}

// FuzzCheck feeds damaged copies of a small archive to Check, which must
// never panic, and must describe (not fail on) whatever it gets.
func FuzzCheck(f *testing.F) {
	root := needCheckQA(f)
	src := filepath.Join(root, "archives", "ok-foo")
	var files [3][]byte
	for i, ext := range []string{".meta", ".index", ".0"} {
		b, err := os.ReadFile(src + ext)
		if err != nil {
			f.Fatal(err)
		}
		files[i] = b
	}
	f.Add(uint8(0), uint32(200), uint32(0xffffffff))
	f.Add(uint8(1), uint32(140), uint32(0))
	f.Add(uint8(2), uint32(300), uint32(1))
	f.Add(uint8(2), uint32(136), uint32(0x7fffffff))
	dir := fuzzdir.Dir(f)
	f.Fuzz(func(t *testing.T, which uint8, off uint32, val uint32) {
		for i, ext := range []string{".meta", ".index", ".0"} {
			b := slices.Clone(files[i])
			if int(which)%3 == i && len(b) >= 4 {
				o := int(off) % (len(b) - 3)
				binary.BigEndian.PutUint32(b[o:], val)
				if which >= 128 {
					b = b[:o]
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "a"+ext), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Check(filepath.Join(dir, "a"), CheckOptions{Verbose: true}); err != nil {
			t.Fatal(err)
		}
	})
}
