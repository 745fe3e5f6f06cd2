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
}
