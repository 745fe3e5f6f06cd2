package interop

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
)

// pcprewrite against pmlogrewrite: the stock configurations of PCP on the
// QA archives, our own configurations covering every clause, and the same
// rewrites in our rules language. Outputs must print identically under
// pmdumplog -a -e -h -I (apart from the PID line) and pmlogcheck must find
// nothing new in ours; where pmlogrewrite fails, ours must fail too.

const stockDir = "/var/lib/pcp/config/pmlogrewrite"

// Where pcprewrite means to differ from pmlogrewrite 6.0.3 (docs/rules.md
// and docs/pcprewrite.md say why). Such a case may differ in its dump; it
// must still be sound under pmlogcheck.
const (
	quirkClusterLabels = "a PMID change moves the metric's cluster labels (6.0.3 never finds them)"
	quirkHelpText      = "a PMID change moves all of the metric's help texts (6.0.3 moves one)"
	quirkShiftDelta    = "6.0.3 aborts shifting the time of a v3 archive with delta instance domains"
	quirkStarDup       = "6.0.3 rejects d.* indom rules on archives where a domain has several versions"
)

var rewriteQuirks = map[string][]string{
	"own_metric_omnibus_v3":    {quirkClusterLabels, quirkHelpText},
	"own_s_metric_omnibus_v3":  {quirkClusterLabels, quirkHelpText},
	"own_duplicate_omnibus_v3": {quirkClusterLabels, quirkHelpText},
	"own_star_omnibus_v3":      {quirkStarDup},
	"own_global_omnibus_v3":    {quirkShiftDelta},
	"expr_metric_omnibus_v3":   {quirkClusterLabels, quirkHelpText},
}

type rewriteCase struct {
	name    string
	archive string
	theirs  []string // pmlogrewrite's options
	mine    []string // ours, when they differ (the rules language)
}

// stockSubset are the archives each stock file is also applied to on its
// own: Linux PMDA archives of several ages, v2 and v3.
var stockSubset = []string{"20041125", "20180102", "pcp-mpstat3", "omnibus_v3", "20101004-trunc"}

func rewriteCases(t *testing.T) []rewriteCase {
	var cases []rewriteCase
	for _, a := range lightArchives(t) {
		cases = append(cases, rewriteCase{name: "stock_" + filepath.Base(a), archive: a, theirs: []string{"-c", stockDir}})
	}
	files, err := filepath.Glob(filepath.Join(stockDir, "*.conf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no stock configurations in %s: %v", stockDir, err)
	}
	sort.Strings(files)
	for _, f := range files {
		for _, a := range stockSubset {
			n := strings.TrimSuffix(filepath.Base(f), ".conf")
			cases = append(cases, rewriteCase{name: "stock1_" + n + "_" + a, archive: filepath.Join(qaDir, a), theirs: []string{"-c", f}})
		}
	}
	own, err := filepath.Glob("testdata/rewrite/*.conf")
	if err != nil || len(own) == 0 {
		t.Fatalf("no configurations in testdata/rewrite: %v", err)
	}
	for _, f := range own {
		n := strings.TrimSuffix(filepath.Base(f), ".conf")
		archives := []string{"omnibus_v3"}
		if n == "global" {
			archives = append(archives, "20041125", "541380_v2")
		}
		for _, a := range archives {
			c := rewriteCase{name: "own_" + n + "_" + a, archive: filepath.Join(qaDir, a), theirs: []string{"-c", f}}
			cases = append(cases, c)
			if r := strings.TrimSuffix(f, ".conf") + ".rules"; fileExists(r) {
				cases = append(cases, rewriteCase{name: "expr_" + n + "_" + a, archive: c.archive, theirs: c.theirs, mine: []string{"-r", r}})
			}
		}
	}
	cases = append(cases, rewriteCase{name: "own_s_metric_omnibus_v3", archive: filepath.Join(qaDir, "omnibus_v3"),
		theirs: []string{"-s", "-c", "testdata/rewrite/metric.conf"}})
	return cases
}

func TestRewriteLikePmlogrewrite(t *testing.T) {
	needPCP(t)
	pcp := "/usr/lib/pcp/bin/pmlogrewrite"
	if _, err := os.Stat(pcp); err != nil {
		t.Fatalf("pmlogrewrite missing: %v", err)
	}
	cases := rewriteCases(t)
	byName := map[string]rewriteCase{}
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
		tr := run(slow, nil, pcp, append(append([]string(nil), c.theirs...), c.archive, theirs)...)
		var mr result
		if c.mine != nil {
			mr = run(slow, nil, ours("pcprewrite"), append(append([]string(nil), c.mine...), c.archive, "-o", mine)...)
		} else {
			mr = run(slow, nil, ours("pmlogrewrite"), append(append([]string(nil), c.theirs...), c.archive, mine)...)
		}
		if mr.code > 2 || mr.code < 0 || strings.Contains(mr.stderr, "internal error") {
			t.Fatalf("pcprewrite crashed: exit %d: %s", mr.code, mr.stderr)
		}
		_, mineMade := os.Stat(mine + ".meta")
		_, theirsMade := os.Stat(theirs + ".meta")
		q := rewriteQuirks[name]
		switch {
		case tr.code != 0 && mr.code != 0:
			bothFail.Add(1)
			if mineMade == nil {
				t.Errorf("pcprewrite failed (%s) but left %s.meta behind", strings.TrimSpace(mr.stderr), mine)
			}
			return
		case tr.code != 0 && q != nil:
			quirks.Add(1)
			t.Logf("pmlogrewrite fails as documented (%v): %s", q, strings.TrimSpace(tr.stderr))
			for _, f := range newFindings(mine, "", []string{c.archive}, false) {
				t.Errorf("pmlogcheck reports %q in pcprewrite's output", f)
			}
			return
		case tr.code != 0:
			t.Fatalf("pmlogrewrite fails (exit %d: %s) and pcprewrite does not", tr.code, strings.TrimSpace(tr.stderr))
		case mr.code != 0:
			t.Fatalf("pcprewrite fails (exit %d: %s) where pmlogrewrite does not", mr.code, strings.TrimSpace(mr.stderr))
		case theirsMade != nil:
			// Nothing written by either (an empty archive is skipped).
			if mineMade == nil {
				t.Fatalf("pmlogrewrite wrote nothing (%s) and pcprewrite wrote an archive", strings.TrimSpace(tr.stderr))
			}
			same.Add(1)
			return
		}
		for _, f := range newFindings(mine, theirs, []string{c.archive}, false) {
			t.Errorf("pmlogcheck reports %q in pcprewrite's output, not in pmlogrewrite's nor in the input", f)
		}
		d := sameOutputs(t, theirs, mine, flags...)
		switch {
		case d == "":
			same.Add(1)
		case q != nil:
			quirks.Add(1)
			t.Logf("differs as documented (%v): %s", q, d)
		default:
			t.Errorf("pmdumplog %v differs from pmlogrewrite's output: %s", flags, d)
		}
	})
	t.Logf("pcprewrite vs pmlogrewrite: %d identical, %d documented differences, %d failing in both, of %d cases",
		same.Load(), quirks.Load(), bothFail.Load(), total.Load())
}
