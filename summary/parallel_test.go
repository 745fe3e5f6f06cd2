package summary

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pcptools/pcptools/format"
)

// TestWorkersAgree summarises every QA archive (and the example) with one
// worker and with several, under option sets that touch every statistic
// (text, -B bins, -a, JSON with percentiles and presence, a window): the
// outputs must be the same bytes, since the split only decides which
// goroutine does a metric's arithmetic.
func TestWorkersAgree(t *testing.T) {
	metas, _ := filepath.Glob(filepath.Join(qaArchives, "*.meta*"))
	if len(metas) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no QA archives in %s (CI installs pcp-testsuite)", qaArchives)
		}
		t.Log("no QA archives: only the example")
	}
	paths := []string{filepath.Join("..", "testdata", "example", "demo")}
	// The three largest compressed archives take seconds each to
	// decompress; TestSummary (interop) compares them with pmlogsummary
	// under the default workers.
	heavy := map[string]bool{"20180416.10.00": true, "pcp-pidstat-process-args": true, "bozo-20170904": true}
	for _, m := range metas {
		if heavy[strings.Split(filepath.Base(m), ".meta")[0]] {
			continue
		}
		paths = append(paths, strings.TrimSuffix(strings.TrimSuffix(m, ".xz"), ".meta"))
	}
	sets := []Options{
		{},
		{Stochastic: true, Min: true, Max: true, MinTime: true, MaxTime: true, Count: true, Bins: 4},
		{JSON: true, Percentiles: []float64{50, 99}},
		{Sum: true, Start: "@00:00:05"},
	}
	// One open archive serves every run on it: its volumes are
	// decompressed once, not once per run.
	run := func(a *format.Archive, o Options, workers int) (string, string) {
		var out bytes.Buffer
		o.Workers, o.Location, o.Precision = workers, time.UTC, DefaultPrecision
		err := Run(&out, a, o)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		return out.String(), msg
	}
	// Each archive runs half the option sets (archive k the sets i with
	// i+k even), each set half the archives; PCPTOOLS_QA_FULL=1 runs
	// them all, as interop's rotation does.
	full := os.Getenv("PCPTOOLS_QA_FULL") != ""
	compared := 0
	for k, p := range paths {
		a, err := format.Open(p)
		if err != nil {
			continue // a bad archive: nothing to summarise
		}
		for i, o := range sets {
			if !full && (i+k)%2 != 0 {
				continue
			}
			want, werr := run(a, o, 1)
			for _, n := range []int{3} { // (two, the default on CI, meets pmlogsummary in interop)
				got, gerr := run(a, o, n)
				if got != want || gerr != werr {
					t.Errorf("%s, option set %d, %d workers: differs from one worker\n got (%s):\n%s\nwant (%s):\n%s",
						filepath.Base(p), i, n, gerr, got, werr, want)
				}
				compared++
			}
		}
	}
	t.Logf("%d archives, %d comparisons", len(paths), compared)
}
