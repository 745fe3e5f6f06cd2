package interop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pcptools/pcptools/format"
)

// Where pcpextract means to differ from pmlogextract (docs/compatibility.md
// says why). A case listed here may differ; its output is then checked for
// soundness instead: pmlogcheck finds nothing new in it, and no record of
// the inputs is missing that pmlogextract wrote.
const (
	quirkEpoch = "pmlogextract loses records in the first second of 1970 (it takes time 0 for 'no time yet')"
	quirkLost  = "pmlogextract writes a <mark> before, and loses, a record of another input at the same time as the end of an input"
	quirkTrail = "pmlogextract writes a <mark> after the last record when two inputs end together"
	quirkCarry = "pcpextract carries discrete values logged before -S to the window's start; pmlogextract loses them"
)

var extractQuirks = map[string]string{
	"dyninsts": quirkEpoch, "dyninsts2": quirkEpoch, "rank-pred": quirkEpoch, "value-test": quirkEpoch,
	"host_localhost": quirkEpoch, "hostx_localhost": quirkEpoch, "hostm_localhost": quirkEpoch,
	"host_ram-Lenovo": quirkLost, "hostx_ram-Lenovo": quirkLost, "hostm_ram-Lenovo": quirkLost,
	"hostx_snort": quirkLost, "hostx_dieyong": quirkLost, "hostx_ha2": quirkLost, "hostx_rattle": quirkLost,
	"hostx_vldb.engr": quirkTrail,
	"S-T-native":      quirkCarry,
}

// wrapValue is the second line of a pmlogcheck wrap report.
var wrapValue = regexp.MustCompile(`^value \S+ at \S+$`)

type extractCase struct {
	name   string
	args   []string // options and inputs, as pmlogextract takes them (no output)
	theirs []string // PCP's arguments when they must differ (the -T second)
	native bool     // run as pcpextract (-o OUT) rather than as pmlogextract
}

// extractCases are the merges compared with pmlogextract: every QA archive
// on its own, every host's archives together (plain, -x, -m), and the
// options on a few archives.
func extractCases(t *testing.T) []extractCase {
	var cases []extractCase
	byHost := map[string][]string{}
	for _, a := range lightArchives(t) {
		cases = append(cases, extractCase{name: filepath.Base(a), args: []string{a}})
		ar, err := format.Open(a)
		if err != nil {
			continue // the copy tests cover archives that do not open
		}
		h := ar.Label().Hostname
		byHost[h] = append(byHost[h], a)
	}
	hosts := make([]string, 0, len(byHost))
	for h, as := range byHost {
		if len(as) > 1 {
			hosts = append(hosts, h)
		}
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		as := byHost[h]
		cases = append(cases,
			extractCase{name: "host_" + h, args: as},
			extractCase{name: "hostx_" + h, args: append([]string{"-x"}, as...)},
			extractCase{name: "hostm_" + h, args: append([]string{"-m"}, as...)})
	}
	q := func(n string) string { return filepath.Join(qaDir, n) }
	mnm := []string{q("mark_no_mark_0"), q("mark_no_mark_1"), q("mark_no_mark_2")}
	cfg := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(cfg, []byte("# a comment\nkernel.all.load [\"1 minute\", 15]\nsample.bin [100 200, 300] sampledso.long\n  disk.dev,'hinv'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := func(name string, args ...string) extractCase { return extractCase{name: name, args: args} }
	cases = append(cases,
		opt("mnm", mnm...),
		opt("mnm-m", append([]string{"-m"}, mnm...)...),
		opt("mnm-reversed", mnm[2], mnm[1], mnm[0]),
		opt("mnm-f", append([]string{"-f"}, mnm...)...),
		opt("s10", "-s", "10", q("mark_no_mark_0"), q("mark_no_mark_1")),
		opt("v3", "-v", "3", q("rattle")),
		opt("V3", "-V", "3", q("mark_no_mark_0"), q("mark_no_mark_1")),
		opt("V3-v2-and-v3", "-V", "3", q("omnibus_v3"), q("omnibus")),
		opt("config-rattle", "-c", cfg, q("rattle")),
		opt("config-sample", "-c", cfg, q("ok-bigbin")),
		opt("config-multi", "-c", cfg, q("arch_a"), q("arch_b")),
		opt("S-start", "-S", "+60", q("ok-mv-bigbin")),
		opt("S-late", "-S", "@11:52:52.3", q("ok-mv-bigbin")),
		opt("z-window", "-z", "-S", "+2", q("ok-bigbin")),
		opt("Z-window", "-Z", "UTC", "-S", "+2", q("ok-bigbin")),
	)
	// -T: pmlogextract adds a second to the end of the window, and so
	// does pcpextract under that name; pcpextract under its own does not:
	// ending N seconds before the archive's end for it is ending N+1
	// seconds before it for pmlogextract.
	tcase := func(name string, args []string, end float64) []extractCase {
		same := append([]string{"-T", fmt.Sprintf("-%g", end)}, args...)
		theirs := append([]string{"-T", fmt.Sprintf("-%g", end+1)}, args...)
		return []extractCase{{name: name, args: same},
			{name: name + "-native", args: same, theirs: theirs, native: true}}
	}
	cases = append(cases, tcase("T", []string{q("ok-mv-bigbin")}, 10.5)...)
	cases = append(cases, tcase("S-T", []string{"-S", "+5.5", q("ok-mv-bigbin")}, 20.5)...)
	cases = append(cases, tcase("T-mnm", mnm, 60.5)...)
	cases = append(cases,
		extractCase{name: "native-mnm", args: mnm, native: true},
		extractCase{name: "native-config", args: []string{"-c", cfg, q("arch_a"), q("arch_b")}, native: true},
	)
	return cases
}

// TestExtractLikePmlogextract: pcpextract (as pmlogextract) writes what
// pmlogextract writes, under pmdumplog -a -e -h -I, apart from the PID and
// the documented quirks; it fails where pmlogextract fails; pmlogcheck finds
// nothing in its output it does not find in pmlogextract's.
func TestExtractLikePmlogextract(t *testing.T) {
	needPCP(t)
	pcp := "/usr/lib/pcp/bin/pmlogextract"
	if _, err := os.Stat(pcp); err != nil {
		t.Fatalf("pmlogextract missing: %v", err)
	}
	cases := extractCases(t)
	byName := map[string]extractCase{}
	names := make([]string, len(cases))
	for i, c := range cases {
		byName[c.name] = c
		names[i] = c.name
	}
	var same, quirks, bothFail, total atomic.Int32
	flags := []string{"-a", "-e", "-h", "-I"}
	forEach(t, names, func(t *testing.T, name string) {
		c := byName[name]
		total.Add(1)
		dir := t.TempDir()
		theirs, mine := filepath.Join(dir, "theirs"), filepath.Join(dir, "mine")
		targs := c.theirs
		if targs == nil {
			targs = c.args
		}
		tr := run(slow, nil, pcp, append(targs, theirs)...)
		var mr result
		if c.native {
			mr = run(slow, nil, ours("pcpextract"), append(c.args, "-o", mine)...)
		} else {
			mr = run(slow, nil, ours("pmlogextract"), append(c.args, mine)...)
		}
		if mr.code > 2 || mr.code < 0 || strings.Contains(mr.stderr, "internal error") {
			t.Fatalf("pcpextract crashed: exit %d: %s", mr.code, mr.stderr)
		}
		_, mineMade := os.Stat(mine + ".meta")
		switch {
		case tr.code > 0 && tr.code < 128 && mr.code != 0:
			bothFail.Add(1)
			if mineMade == nil {
				t.Errorf("pcpextract failed (%s) but left %s.meta behind", strings.TrimSpace(mr.stderr), mine)
			}
			return
		case tr.code > 0 && tr.code < 128:
			t.Fatalf("pmlogextract fails (exit %d: %s) and pcpextract does not", tr.code, strings.TrimSpace(tr.stderr))
		case mr.code != 0:
			t.Fatalf("pcpextract fails (exit %d: %s) where pmlogextract (exit %d) does not", mr.code, strings.TrimSpace(mr.stderr), tr.code)
		case tr.code != 0:
			// pmlogextract crashed (exit < 0: killed by a signal; 6.0.3
			// aborts on some -x merges): ours
			// must be sound on its own.
			quirks.Add(1)
			for _, f := range newFindings(mine, "", c.args, true) {
				t.Errorf("pmlogextract crashed (exit %d) and pmlogcheck finds %q in pcpextract's output", tr.code, f)
			}
			return
		}
		for _, f := range newFindings(mine, theirs, c.args, extractQuirks[name] != "") {
			t.Errorf("pmlogcheck reports %q in pcpextract's output, not in pmlogextract's nor in the inputs", f)
		}
		d := sameOutputs(t, theirs, mine, flags...)
		switch q := extractQuirks[name]; {
		case d == "":
			same.Add(1)
			if q != "" {
				t.Logf("listed quirk did not show: %s", q)
			}
		case q != "":
			quirks.Add(1)
			t.Logf("differs as documented (%s): %s", q, d)
		default:
			t.Errorf("pmdumplog %v differs from pmlogextract's output: %s", flags, d)
		}
	})
	t.Logf("pcpextract vs pmlogextract: %d identical, %d documented differences, %d failing in both, of %d cases",
		same.Load(), quirks.Load(), bothFail.Load(), total.Load())
}

// newFindings returns what pmlogcheck reports in mine and neither in ref
// (pmlogextract's output; "" for none) nor in any input archive named in
// args (the QA archives are flawed on purpose: a merge carries their flaws).
//
// With wrapsOK, counter wraps are not counted: interleaving the records of
// inputs that overlap in time makes counters go back, and where pmlogextract
// lost records or crashed there is no output of its to compare with.
func newFindings(mine, ref string, args []string, wrapsOK bool) []string {
	// checkFindings names every archive ARCHIVE.
	var got []string
	for _, f := range checkFindings(mine) {
		if wrapsOK && (strings.HasSuffix(f, " wrap") || wrapValue.MatchString(f)) {
			continue
		}
		got = append(got, f)
	}
	if len(got) == 0 {
		return nil
	}
	known := map[string]bool{}
	if ref != "" {
		for _, f := range checkFindings(ref) {
			known[f] = true
		}
	}
	var out []string
	for _, f := range got {
		if !known[f] {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil
	}
	// The inputs' own findings, their file names made the output's, and
	// with the volume and time part dropped (a merge renumbers volumes).
	strip := func(f string) string {
		if i := strings.Index(f, "]: "); i >= 0 && strings.HasPrefix(f, "ARCHIVE") {
			return f[i+3:]
		}
		return strings.TrimPrefix(strings.TrimPrefix(f, "ARCHIVE.meta: "), "ARCHIVE: ")
	}
	for _, a := range args {
		if !strings.HasPrefix(a, qaDir) {
			continue // an option or its value
		}
		for _, f := range checkFindings(a) {
			known[strip(f)] = true
		}
	}
	var left []string
	for _, f := range out {
		if !known[strip(f)] && !known[f] {
			left = append(left, f)
		}
	}
	return left
}

// TestExtractWordsLikePCP: under pmlogextract's name, the messages PCP's QA
// tests compare are pmlogextract's, word for word and in the same order
// with its standard output when both go to one pipe (its timezone note,
// buffered by stdio until it exits, comes last): metadata conflicts with
// and without -x (QA 813, 907, 916), timezone mismatches (214), an empty
// window (266), a truncated volume (997), and nothing about a temporal
// index it never reads (812). The output's name is the only difference.
func TestExtractWordsLikePCP(t *testing.T) {
	needPCP(t)
	pcp := "/usr/lib/pcp/bin/pmlogextract"
	bad := "/var/lib/pcp/testsuite/badarchives/"
	for _, c := range [][]string{
		{"20190628.04.03", "20190628.06.31"},       // name, type, semantics, units
		{"-x", "20190628.04.03", "20190628.06.31"}, // the same, left out
		{"schizo-B", "schizo-A"},                   // PMID changed, among others
		{"-x", "schizo-B", "schizo-A"},
		{"dupname-a", "dupname-b"}, // a name given twice
		{"dupname-b", "dupname-c"},
		{"-z", "tzchange-10-a", "tzchange-10-b", "tzchange-11-a", "tzchange-12-b"},
		{"-f", "-z", "tzchange-10-a", "tzchange-11-a", "tzchange-12-a"},
		{"-z", "-S@15:00:00", "-T@15:01:00", "960624.08.17_v2"},
		{"-Z", "UTC", "-S@22:35:00", "-T@22:35:01", "960624.08.17_v2"},
		{bad + "ok-truncbin"},
		{"chartqa1"},
		// a record whose lengths disagree: libpcp's words, the input
		// ends there and the others go on (twenty-first session)
		{bad + "badlen-1", "diff1"},
		// inputs of two hosts, a timezone unlike the output's before
		// them: said input by input, as pmlogextract checks them
		{bad + "badlen-1", "ok-foo"},
		{"mirage", "ok-foo", bad + "badlen-1"},
	} {
		args := append([]string(nil), c...)
		for i, a := range args {
			if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "/") && (i == 0 || args[i-1] != "-Z") {
				args[i] = filepath.Join(qaDir, a)
			}
		}
		dir := t.TempDir()
		theirs, tcode := combined(t, pcp, append(args, filepath.Join(dir, "OUT"))...)
		mine, mcode := combined(t, ours("pmlogextract"), append(args, filepath.Join(dir, "OUT2"))...)
		want := strings.ReplaceAll(theirs, filepath.Join(dir, "OUT"), "OUT")
		got := strings.ReplaceAll(mine, filepath.Join(dir, "OUT2"), "OUT")
		if got != want || (mcode == 0) != (tcode == 0) {
			t.Errorf("%v: exit %d, output\n%s\nwant exit %d, output\n%s", c, mcode, got, tcode, want)
		}
	}
}

// combined runs a command with its standard output and error in one pipe,
// TZ=EST-10 (as PCP's QA tests run).
func combined(t *testing.T, name string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), slow)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "TZ=EST-10")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out.String(), code
}

// extractKnown: the damaged archives where pmlogextract and ours part
// ways (docs/compatibility.md).
var extractKnown = map[string]string{
	"badmeta-6": "pmlogextract aborts in libpcp's encoder (Botch) on a v3 record in a v2 archive; we refuse the metadata",
	"badmeta-7": "libpcp reads a v2 metadata record in a v3 archive on; we stop there",
}

// TestExtractDamagedLikePmlogextract: under pmlogextract's name, damage is
// said in libpcp's and pmlogextract's words ("cannot open archive",
// "cannot get end of archive", an empty archive skipped, "__pmLogRead
// ... Corrupted record", "meta data (TYPE_DESC) ... has not been
// found"), with the same exit status, on PCP's damaged QA archives but
// the four of extractKnown.
func TestExtractDamagedLikePmlogextract(t *testing.T) {
	needPCP(t)
	forEach(t, archivesIn(t, badDir), func(t *testing.T, a string) {
		if why, ok := extractKnown[filepath.Base(a)]; ok {
			t.Skipf("a known difference: %s", why)
		}
		say := func(prog string) (string, int) {
			out := filepath.Join(t.TempDir(), "out")
			r := runIn(filepath.Dir(a), nil, prog, filepath.Base(a), out)
			return strings.ReplaceAll(r.stderr, out, "OUT"), r.code
		}
		want, wcode := say("pmlogextract")
		got, gcode := say(ours("pmlogextract"))
		if got != want || gcode != wcode {
			t.Errorf("exit %d, stderr\n%s\nwant exit %d, stderr\n%s", gcode, got, wcode, want)
		}
	})
}
