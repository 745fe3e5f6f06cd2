package interop

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// libpcpDebug are the -Dlogmeta lines of libpcp that QA test 1076 filters
// out: ours has no libpcp to print them.
var libpcpDebug = regexp.MustCompile(`(?m)^(__pmLogLoadMeta:|addindom\(|addlabel\(|addtext\().*\n`)

// TestPmlogcheckWords: under pmlogcheck's name, ours prints what PCP's
// pmlogcheck prints on the damaged QA archives whose findings it words as
// pmlogcheck does (QA tests 317, 1076, 1381): the same lines on stdout and
// on stderr, in the same order, and the same exit status.
func TestPmlogcheckWords(t *testing.T) {
	needPCP(t)
	link := filepath.Join(t.TempDir(), "pmlogcheck")
	if err := os.Symlink(ours("pcpcat"), link); err != nil {
		t.Fatal(err)
	}
	cases := [][]string{
		{"-z", "badarchives/logsummary-bug"},
		{"badarchives/badmeta-6"},
		{"badarchives/badmeta-7"},
		{"-l", "badarchives/badmeta-1"},
		// pass 0's words, then libpcp's refusal (our own words for
		// both, until the twenty-first session)
		{"badarchives/empty"},
		{"badarchives/badlabel-1"},
		// "encoding botch" in every record where a metric's value
		// format changes, in the record order, among the counter
		// wraps (ours said it once per metric, in our words, until
		// the twenty-second session)
		{"-z", "badarchives/archive-20141125-000009"},
		{"-z", "-w", "badarchives/archive-20141125-000009"},
	}
	for i := 1; i <= 7; i++ {
		cases = append(cases, []string{"-z", "-Dlogmeta", "-z", "badarchives/badmeta-" + strconv.Itoa(i)})
	}
	for _, args := range cases {
		pcp := runIn(filepath.Dir(badDir), nil, "/usr/bin/pmlogcheck", args...)
		pcp.stderr = libpcpDebug.ReplaceAllString(pcp.stderr, "")
		got := runIn(filepath.Dir(badDir), nil, link, args...)
		if got != pcp {
			t.Errorf("pmlogcheck %q:\n  PCP:  status %d, stdout %q, stderr %q\n  ours: status %d, stdout %q, stderr %q",
				args, pcp.code, pcp.stdout, pcp.stderr, got.code, got.stdout, got.stderr)
		}
	}
	// An archive missing its .meta, or every file: pass 0 names what is
	// missing as "./x.meta" when the name has no directory, and only an
	// archive with no file at all matches nothing (ours said so of a
	// missing .meta).
	dir := t.TempDir()
	for _, ext := range []string{".0", ".index"} {
		b, err := os.ReadFile(filepath.Join(qaDir, "ok-foo"+ext))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "ok-foo"+ext), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ in, arch string }{{dir, "ok-foo"}, {filepath.Dir(dir), filepath.Join(filepath.Base(dir), "ok-foo")}, {dir, "nothing"}} {
		pcp := runIn(c.in, nil, "/usr/bin/pmlogcheck", c.arch)
		got := runIn(c.in, nil, link, c.arch)
		if got != pcp {
			t.Errorf("pmlogcheck %s in %s:\n  PCP:  status %d, stdout %q, stderr %q\n  ours: status %d, stdout %q, stderr %q",
				c.arch, c.in, pcp.code, pcp.stdout, pcp.stderr, got.code, got.stdout, got.stderr)
		}
	}
}
