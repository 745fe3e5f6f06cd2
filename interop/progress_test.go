package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProgress: a copy whose standard error is a terminal (a pseudo-
// terminal from script(1)) shows its progress, bytes, records and a
// finish; the same copy with -q, or with standard error in a file, shows
// none, and the archive written is the same.
func TestProgress(t *testing.T) {
	needPCP(t)
	if _, err := exec.LookPath("script"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("script(1) (util-linux) is required in CI: %v", err)
		}
		t.Skip("no script(1)")
	}
	dir := t.TempDir()
	src := filepath.Join(qaDir, "20041125")
	inPty := func(out string, args ...string) string {
		t.Helper()
		cmd := ours("pcpcat") + " --no-sync " + strings.Join(args, " ") + " " + src + " -o " + filepath.Join(dir, out)
		ts := filepath.Join(dir, out+".typescript")
		r := run(time.Minute, nil, "script", "-qec", "stty cols 120 rows 40; "+cmd, ts)
		if r.code != 0 {
			t.Fatalf("script %s: %d %s%s", cmd, r.code, r.stdout, r.stderr)
		}
		b, err := os.ReadFile(ts)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	shown := inPty("tty")
	if !strings.Contains(shown, "records") || !strings.Contains(shown, "done") || !strings.Contains(shown, "KiB") {
		t.Errorf("no progress on a terminal:\n%s", shown)
	}
	if quiet := inPty("quiet", "-q"); strings.Contains(quiet, "records") {
		t.Errorf("progress with -q:\n%s", quiet)
	}
	r := run(time.Minute, nil, ours("pcpcat"), "--no-sync", src, "-o", filepath.Join(dir, "file"))
	if r.code != 0 || r.stderr != "" || r.stdout != "" {
		t.Errorf("into a file: %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	// pcpextract shows it too; under pmlogextract's name, never.
	ts := filepath.Join(dir, "x.typescript")
	x := run(time.Minute, nil, "script", "-qec", "stty cols 120 rows 40; "+ours("pcpextract")+" --no-sync "+src+" -o "+filepath.Join(dir, "x"), ts)
	if b, _ := os.ReadFile(ts); x.code != 0 || !strings.Contains(string(b), "records") {
		t.Errorf("pcpextract on a terminal: %d, no progress:\n%s", x.code, b)
	}
	pts := filepath.Join(dir, "p.typescript")
	p := run(time.Minute, nil, "script", "-qec", "stty cols 120 rows 40; "+ours("pmlogextract")+" "+src+" "+filepath.Join(dir, "p"), pts)
	if b, _ := os.ReadFile(pts); p.code != 0 || strings.Contains(string(b), "records") {
		t.Errorf("pmlogextract's name on a terminal: %d, progress shown:\n%s", p.code, b)
	}
	// pcpsummary shows it while it reads, and ends it before the summary;
	// not with -q, and never as pmlogsummary. The summary is the same.
	summ := func(name string, args ...string) string {
		t.Helper()
		ts := filepath.Join(dir, name+".typescript")
		r := run(time.Minute, nil, "script", "-qec", "stty cols 120 rows 40; "+strings.Join(args, " ")+" "+src, ts)
		b, _ := os.ReadFile(ts)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, b)
		}
		return strings.ReplaceAll(string(b), "\r\n", "\n")
	}
	plain := run(time.Minute, nil, ours("pcpsummary"), src)
	shown = summ("s", ours("pcpsummary"))
	if i, j := strings.Index(shown, "records"), strings.Index(shown, plain.stdout); i < 0 || j < i || strings.Contains(shown[j:], "records") {
		t.Errorf("pcpsummary on a terminal: want the progress, then the summary:\n%s", shown)
	}
	if q := summ("sq", ours("pcpsummary"), "-q"); strings.Contains(q, "records") {
		t.Errorf("pcpsummary -q shows progress:\n%s", q)
	}
	if c := summ("sc", ours("pmlogsummary")); strings.Contains(c, "records") || !strings.Contains(c, plain.stdout) {
		t.Errorf("pmlogsummary's name on a terminal: progress shown, or another summary:\n%s", c)
	}
	for _, s := range []string{".0", ".meta", ".index"} {
		a, _ := os.ReadFile(filepath.Join(dir, "tty"+s))
		b, _ := os.ReadFile(filepath.Join(dir, "file"+s))
		// The label holds the writer's PID: compare the rest.
		if len(a) != len(b) || len(a) < 16 || string(a[16:]) != string(b[16:]) {
			t.Errorf("%s differs between the copies on a terminal and into a file", s)
		}
	}
}
