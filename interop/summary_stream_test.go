package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSummaryStream (issue 14): pcpsummary of a stream that came with its
// metadata (pcpcat ARCHIVE | pcpsummary) prints what pcpsummary ARCHIVE
// prints, on every QA archive, and spills nothing (TMPDIR names no
// directory, so a spill would fail), also with a window counted from the
// start (-S, -T); with -B, which needs a second look at the values, or a
// -T counted back from the end, it spills, prints the same, and leaves
// nothing behind.
func TestSummaryStream(t *testing.T) {
	needPCP(t)
	forEach(t, lightArchives(t), func(t *testing.T, a string) {
		for _, c := range []struct {
			opts   []string
			spills bool
		}{
			{[]string{"-a", "-l"}, false},
			{[]string{"-x", "-m", "-M", "-i", "-I", "-H", "-F", "-z"}, false},
			{[]string{"--json", "--percentiles", "50,99"}, false},
			{[]string{"-B", "3"}, true},
			// A window counted from the start needs no end: streamed.
			// One counted back from the end is spilled.
			{[]string{"-S", "30s", "-T", "20m", "-a", "-l", "-z"}, false},
			{[]string{"-S", "2m", "--json"}, false},
			{[]string{"-T", "-1m", "-a"}, true},
		} {
			opts := c.opts
			want := run(slow, nil, ours("pcpsummary"), append(append([]string{}, opts...), a)...)
			// Unless it must spill, TMPDIR names no directory: a spill
			// would fail.
			tmp := filepath.Join(t.TempDir(), "absent")
			if c.spills {
				tmp = t.TempDir()
			}
			sh := ours("pcpcat") + " " + a + " 2>/dev/null | TMPDIR=" + tmp + " " + ours("pcpsummary") + " " + strings.Join(opts, " ")
			cmd := exec.Command("sh", "-c", sh)
			cmd.Env = append(os.Environ(), "TZ=UTC")
			out, err := cmd.Output()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if string(out) != want.stdout || code != want.code {
				t.Errorf("%v: through a pipe (exit %d):\n%s\nwant (exit %d):\n%s", opts, code, out, want.code, want.stdout)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
				t.Errorf("%v: scratch files left: %v", opts, left)
			}
		}
	})
}
