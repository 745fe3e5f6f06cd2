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
