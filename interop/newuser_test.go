package interop

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckHonoursWindow is issue 21's point 4: pcpcat --check looked at
// the whole archive whatever -S and -T said. PCP's QA archive "wrap" has
// two counter wraps, 4.9 and 8.9 seconds in: a window holds those it
// covers, and a window before or after them is clean.
func TestCheckHonoursWindow(t *testing.T) {
	needPCP(t)
	wrap := filepath.Join(qaDir, "wrap")
	for _, c := range []struct {
		args  []string
		wraps int
	}{
		{nil, 2},
		{[]string{"-T", "+1s"}, 0},
		{[]string{"-S", "+6s"}, 1},
		{[]string{"-S", "+9.5s"}, 0},
		{[]string{"-S", "+1s", "-T", "+6s"}, 1},
	} {
		args := append(append([]string{"--check"}, c.args...), wrap)
		r := run(time.Minute, nil, ours("pcpcat"), args...)
		got := strings.Count(r.stdout, "32-bit wrap")
		wantCode := 0
		if c.wraps > 0 {
			wantCode = 1
		}
		if got != c.wraps || r.code != wantCode {
			t.Errorf("pcpcat %s: %d wraps, exit %d; want %d wraps, exit %d\n%s%s", strings.Join(args, " "), got, r.code, c.wraps, wantCode, r.stdout, r.stderr)
		}
	}
}

// TestConcatenatedStreamsNotLost is issue 15's first hole: the second of
// two concatenated streams was dropped with exit status 0. Now they read
// as the same archives named together do, and garbage after a stream is
// an error.
func TestConcatenatedStreamsNotLost(t *testing.T) {
	needPCP(t)
	dir := t.TempDir()
	readmeFixtures(t, dir)
	sh := func(line string) result {
		return run(time.Minute, nil, "bash", "-o", "pipefail", "-c", "cd "+dir+" && PATH="+binDir+":$PATH && "+line)
	}
	joined := sh("(pcpcat a; pcpcat b; pcpcat c) | pcpcat -m")
	named := sh("pcpcat -m a b c")
	if joined.code != 0 || named.code != 0 {
		t.Fatalf("exit %d, %d: %s%s", joined.code, named.code, joined.stderr, named.stderr)
	}
	if joined.stdout != named.stdout || strings.Count(joined.stdout, "<mark>") != 2 {
		t.Errorf("three concatenated streams differ from the three archives named together (%d and %d bytes)", len(joined.stdout), len(named.stdout))
	}
	if r := sh("(pcpcat a; pcpcat b) | pcpextract -o ab && pcpcat --check ab"); r.code != 0 {
		t.Errorf("pcpextract of two concatenated streams: %s", r.stderr)
	}
	if n := countRecords(t, filepath.Join(dir, "ab")); n != countRecords(t, filepath.Join(dir, "a"))+countRecords(t, filepath.Join(dir, "b")) {
		t.Errorf("pcpextract of two concatenated streams kept %d records", n)
	}
	for line, want := range map[string]string{
		"(pcpcat b; pcpcat a) | pcpcat -m":                      "overlap",
		"(pcpcat a; echo junk) | pcpcat -m":                     "follows the END frame",
		"(pcpcat a; pcpcat pmlogger/bozo/20180102) | pcpcat -m": "differs",
	} {
		if r := sh(line); r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want a failure saying %q", line, r.code, r.stderr, want)
		}
	}
}
