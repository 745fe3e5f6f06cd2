package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// summaryOptions are the pmlogsummary command lines pcpsummary, invoked
// as pmlogsummary, must answer byte for byte on every QA archive. The
// window is relative to the archive's bounds so that it means something
// on each; "names" stands for metric specifications taken from the
// archive itself (see summaryNames).
var summaryOptions = [][]string{
	{}, {"-a"}, {"-b", "-y"}, {"-x"}, {"-m", "-M", "-i", "-I", "-H", "-F"}, {"-f", "-y"}, {"-s"},
	{"-B", "4", "-p", "1"}, {"-l"}, {"-z"}, {"-S", "+2.5", "-T", "-1.25", "-l", "-y"}, {"names"},
	{"wrap", "-a"}, // with PCP_COUNTER_WRAP set: a counter that goes down wrapped
	// -B's second pass over a window (libpcp's mode set again at its start)
	{"-S", "+2.5", "-T", "-1.25", "-B", "4", "-p", "1"},
}

// summaryKnown are the cases where pcpsummary and pmlogsummary differ on
// purpose (docs/compatibility.md): archive base name and option set.
var summaryKnown = map[string]string{
	// Damaged archives (badarchives/): both print something, and the
	// statuses differ
	"badmeta-6": "libpcp reads a v3 metadata record in a v2 archive on; we stop there",
	"badmeta-7": "libpcp reads a v2 metadata record in a v3 archive on; we stop there",
}

var summaryLink sync.Once

// pmlogsummaryLink returns our binary under pmlogsummary's name.
func pmlogsummaryLink(t *testing.T) string {
	t.Helper()
	link := filepath.Join(binDir, "pmlogsummary")
	summaryLink.Do(func() {
		if err := os.Symlink("pcpsummary", link); err != nil && !errors.Is(err, os.ErrExist) {
			t.Fatal(err)
		}
	})
	return link
}

var instLine = regexp.MustCompile(`^\*?(\S+) \["([^"\]]*)"\]`)

// summaryNames picks metric specifications from pmlogsummary's default
// output on an archive: the first metric with a named instance, with that
// instance and one that does not exist; the first component of the first
// metric's name (a non-leaf); and a name the archive does not have.
func summaryNames(out string) []string {
	var names []string
	lines := strings.Split(out, "\n")
	for _, l := range lines {
		if m := instLine.FindStringSubmatch(l); m != nil {
			names = append(names, m[1]+`["`+m[2]+`",no-such-instance]`)
			break
		}
	}
	if first, _, ok := strings.Cut(strings.TrimPrefix(lines[0], "*"), " "); ok && first != "" {
		top, _, _ := strings.Cut(first, ".")
		names = append(names, top)
	}
	return append(names, "no.such.metric", "bad[spec")
}

// TestSummaryLikePmlogsummary: `pmlogsummary OPTIONS A` prints the same
// bytes, with the same exit status, as PCP's pmlogsummary, for every QA
// archive and each option set.
func TestSummaryLikePmlogsummary(t *testing.T) {
	needPCP(t)
	ours := pmlogsummaryLink(t)
	began := time.Now()
	var mu sync.Mutex
	pass, total := map[string]int{}, map[string]int{}
	forEach(t, lightArchives(t), func(t *testing.T, a string) {
		dir, base := filepath.Dir(a), filepath.Base(a)
		var names []string
		for _, opts := range summaryOptions {
			key := strings.Join(opts, " ")
			args := append([]string{}, opts...)
			var env []string
			switch {
			case key == "names":
				args = append([]string{"-y", base}, names...)
			case len(opts) > 0 && opts[0] == "wrap":
				args = append(args[1:], base)
				env = []string{"PCP_COUNTER_WRAP=1"}
			default:
				args = append(args, base)
			}
			want := runIn(dir, env, "pmlogsummary", args...)
			got := runIn(dir, env, ours, args...)
			if key == "" {
				names = summaryNames(want.stdout)
			}
			mu.Lock()
			total[key]++
			mu.Unlock()
			if why, ok := summaryKnown[base+" "+key]; ok {
				t.Logf("pmlogsummary %s: a known difference (%s)", strings.Join(args, " "), why)
				continue
			}
			switch {
			case want.timedOut || got.timedOut:
				t.Errorf("pmlogsummary %s: timed out", strings.Join(args, " "))
				continue
			case got.code != want.code:
				t.Errorf("pmlogsummary %s: exit status %d, PCP's %d (%s)", strings.Join(args, " "), got.code, want.code, strings.TrimSpace(got.stderr))
				continue
			case want.code == 0 && got.stdout != want.stdout:
				t.Errorf("pmlogsummary %s differs from PCP's: %s", strings.Join(args, " "), firstDiff(want.stdout, got.stdout))
				continue
			}
			mu.Lock()
			pass[key]++
			mu.Unlock()
		}
	})
	for _, o := range summaryOptions {
		k := strings.Join(o, " ")
		t.Logf("options %-40q identical on %d of %d archives", k, pass[k], total[k])
	}
	t.Logf("%d archives × %d option sets in %v", total[""], len(summaryOptions), time.Since(began).Round(time.Second))
}

// TestSummaryDamaged: on PCP's damaged archives pcpsummary fails where
// pmlogsummary fails, never with an internal error, and says where.
func TestSummaryDamaged(t *testing.T) {
	needPCP(t)
	ours := pmlogsummaryLink(t)
	archives := archivesIn(t, badDir)
	var mu sync.Mutex
	same := 0
	forEach(t, archives, func(t *testing.T, a string) {
		if why, ok := summaryKnown[filepath.Base(a)]; ok {
			t.Skipf("a known difference: %s", why)
		}
		want := run(slow, nil, "pmlogsummary", a)
		got := run(slow, nil, ours, a)
		if got.code == 3 || strings.Contains(got.stderr, "panic") || strings.Contains(got.stderr, "internal error") {
			t.Fatalf("internal error: %s", got.stderr)
		}
		if want.code != 0 && got.code == 0 {
			t.Errorf("PCP fails (%s), we do not", strings.TrimSpace(want.stderr))
		}
		if got.code != 0 && got.stderr == "" {
			t.Errorf("exit status %d with nothing said", got.code)
		}
		// Under pmlogsummary's name, damage is said in libpcp's words.
		if got.code != want.code || got.stdout != want.stdout || got.stderr != want.stderr {
			t.Errorf("exit %d, stdout\n%s\nstderr\n%s\nwant exit %d, stdout\n%s\nstderr\n%s", got.code, got.stdout, got.stderr, want.code, want.stdout, want.stderr)
			return
		}
		mu.Lock()
		same++
		mu.Unlock()
	})
	t.Logf("%d of %d damaged archives: same stdout, stderr and exit status as pmlogsummary", same, len(archives))
}

// runIn runs a tool in dir with TZ=UTC and env, so that archive names in
// its messages are as given.
func runIn(dir string, env []string, name string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), slow)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "TZ=UTC"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), timedOut: ctx.Err() != nil}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		r.code = -1
		r.stderr += err.Error()
	}
	return r
}

// firstDiff says where two outputs first differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, wl, gl)
		}
	}
	return "(trailing newline)"
}
