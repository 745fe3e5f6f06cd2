package interop

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

var panicText = regexp.MustCompile(`goroutine \d+|panic:|internal error`)

// badInputs returns each damaged archive (by base name) and each stray
// file in PCP's badarchives directory.
func badInputs(t *testing.T) []string {
	t.Helper()
	if _, err := os.Stat(badDir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PCP QA badarchives missing in CI: %v", err)
		}
		t.Skip(err)
	}
	ents, err := os.ReadDir(badDir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range ents {
		name := e.Name()
		base := regexp.MustCompile(`\.(meta|index|\d+)$`).ReplaceAllString(name, "")
		if base != name && fileExists(filepath.Join(badDir, base+".meta")) {
			name = base
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, filepath.Join(badDir, name))
		}
	}
	sort.Strings(out)
	return out
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestBadArchives: every damaged input gives an error or a warning (from
// the dump or from --check) wherever PCP's own tools complain about it,
// never a panic or a hang, never a partial output; and --check fails
// exactly on the inputs pmlogcheck complains about.
func TestBadArchives(t *testing.T) {
	needPCP(t)
	forEach(t, badInputs(t), func(t *testing.T, a string) {
		pc := run(slow, nil, "pmlogcheck", a)
		pcpFlags := pc.code != 0 || strings.TrimSpace(pc.stdout+pc.stderr) != ""
		pd := run(slow, nil, "pmdumplog", "-a", a)
		pcpComplains := pcpFlags || pd.code != 0 || strings.TrimSpace(pd.stderr) != ""

		out := filepath.Join(t.TempDir(), "copy")
		said := false
		for _, args := range [][]string{{"-a", "-e", "-h", "-I", a}, {a, "-o", out}, {"--check", a}} {
			r := run(30*time.Second, nil, ours("pcpcat"), args...)
			if r.timedOut {
				t.Errorf("pcpcat %v hangs", args)
				continue
			}
			if r.code == 3 || panicText.MatchString(r.stderr) {
				t.Errorf("pcpcat %v crashes: %s", args, r.stderr)
				continue
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*")); args[1] == "-o" && r.code != 0 && len(left) > 0 {
				t.Errorf("pcpcat %v failed and left %v behind", args, left)
			}
			if r.code != 0 || strings.TrimSpace(r.stderr) != "" {
				said = true
			}
			if args[0] == "--check" && (r.code != 0) != pcpFlags {
				t.Errorf("pcpcat --check exits %d; pmlogcheck flags it: %v (%q)", r.code, pcpFlags, strings.TrimSpace(pc.stdout+pc.stderr))
			}
		}
		if pcpComplains && !said {
			t.Errorf("PCP complains about this input and pcpcat says nothing")
		}
	})
}
