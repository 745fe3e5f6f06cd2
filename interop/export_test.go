package interop

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// exportArchives are the QA archives the OpenMetrics test takes in CI:
// v2 and v3, compressed and several volumes, counters, instances,
// strings (left out of OpenMetrics), events and edge values.
// PCPTOOLS_EXPORT_FULL=1 takes all the light ones.
var exportArchives = []string{"20041125", "20190628.04.03", "eventrec", "sample-labels",
	"omnibus_v3", "multi-vm00", "value-test", "20150105.17.57", "pcp-vmstat"}

func needPromtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("promtool (Debian's prometheus package) is required in CI: %v", err)
		}
		t.Skipf("no promtool: %v", err)
	}
	return p
}

// TestOpenMetricsPromtool checks that promtool turns our OpenMetrics
// into TSDB blocks holding every sample we wrote.
func TestOpenMetricsPromtool(t *testing.T) {
	needPCP(t)
	promtool := needPromtool(t)
	var archives []string
	if os.Getenv("PCPTOOLS_EXPORT_FULL") != "" {
		archives = lightArchives(t)
	} else {
		for _, a := range exportArchives {
			archives = append(archives, filepath.Join(qaDir, a))
		}
	}
	forEach(t, archives, func(t *testing.T, a string) {
		dir := t.TempDir()
		om := filepath.Join(dir, "om.txt")
		if r := run(slow, nil, ours("pcpexport"), "--openmetrics", "-o", om, a); r.code != 0 {
			t.Fatalf("pcpexport --openmetrics: %d\n%s", r.code, r.stderr)
		}
		want := omSamples(t, om)
		r := run(slow, nil, promtool, "tsdb", "create-blocks-from", "openmetrics", om, filepath.Join(dir, "tsdb"))
		if r.code != 0 {
			t.Fatalf("promtool refused our OpenMetrics: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if got := blockSamples(t, r.stdout); got != want {
			t.Fatalf("promtool's blocks hold %d samples, we wrote %d\n%s", got, want, r.stdout)
		}
	})
}

// omSamples counts the sample lines of an OpenMetrics file.
func omSamples(t *testing.T, path string) int {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := sc.Text(); l != "" && l[0] != '#' {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// blockSamples adds up the NUM SAMPLES column of promtool's table of the
// blocks it made.
func blockSamples(t *testing.T, out string) int {
	col, total := -1, 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && f[0] == "BLOCK" {
			// "BLOCK ULID MIN TIME MAX TIME DURATION NUM SAMPLES ...":
			// the values row has one field per two-word heading.
			col = -1
			for i := 0; i+1 < len(f); i++ {
				if f[i] == "NUM" && f[i+1] == "SAMPLES" {
					col = i - 3 // BLOCK ULID, MIN TIME, MAX TIME are pairs
				}
			}
			continue
		}
		if col < 0 || len(f) <= col {
			continue
		}
		n, err := strconv.Atoi(f[col])
		if err != nil {
			t.Fatalf("promtool's table: %q: %v", l, err)
		}
		total += n
	}
	if col < 0 {
		t.Fatalf("no block table in promtool's output:\n%s", out)
	}
	return total
}
