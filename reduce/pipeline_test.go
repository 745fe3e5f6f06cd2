package reduce

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// reduceFiles reduces in natively at the intervals, with the writer
// goroutine or without, and returns the output files' bytes by name.
func reduceFiles(t *testing.T, in string, writer string, ivs ...time.Duration) map[string][]byte {
	t.Helper()
	t.Setenv("PCPTOOLS_REDUCE_WRITER", writer)
	dir := t.TempDir()
	var outs []Output
	for _, iv := range ivs {
		outs = append(outs, Output{Name: filepath.Join(dir, "out"+iv.String()), Interval: iv})
	}
	if err := RunNative(in, outs, Options{Samples: -1, NoSync: true, NoProgress: true, Stderr: io.Discard}); err != nil {
		t.Fatalf("%s (writer %q): %v", in, writer, err)
	}
	files := map[string][]byte{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// TestWriterGoroutine: the output written from the writer goroutine
// (pipeline.go) is the output written directly, byte for byte, with one
// output or several, on the example and on QA archives with instances
// that come and go, marks and several volumes.
func TestWriterGoroutine(t *testing.T) {
	ins := []string{"../testdata/example/demo"}
	for _, a := range []string{"20130706", "mark-bug", "ok-mv-bar", "dyninsts"} {
		p := filepath.Join("/var/lib/pcp/testsuite/archives", a)
		if m, _ := filepath.Glob(p + ".meta*"); len(m) > 0 {
			ins = append(ins, p)
		} else if os.Getenv("CI") == "true" {
			t.Fatalf("no QA archive %s (CI installs pcp-testsuite)", a)
		}
	}
	for _, in := range ins {
		direct := reduceFiles(t, in, "direct", time.Minute, 10*time.Minute)
		piped := reduceFiles(t, in, "", time.Minute, 10*time.Minute)
		if len(direct) == 0 || len(direct) != len(piped) {
			t.Fatalf("%s: %d files written directly, %d through the writer", in, len(direct), len(piped))
		}
		for name, b := range direct {
			if !bytes.Equal(b, piped[name]) {
				t.Errorf("%s: %s differs between the direct and the goroutine writer", in, name)
			}
		}
	}
}

// failAfter is a writer that fails once it has taken n bytes.
type failAfter struct{ n int }

var errFull = errors.New("no room")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errFull
	}
	f.n -= len(p)
	return len(p), nil
}

// TestWriterGoroutineError: a write that fails on the writer goroutine
// ends the run with that error (no hang, no panic), at any point.
func TestWriterGoroutineError(t *testing.T) {
	for _, n := range []int{0, 100, 5000, 50000} {
		err := RunNative("../testdata/example/demo", []Output{{Interval: time.Second}},
			Options{Samples: -1, NoProgress: true, Stdout: &failAfter{n}, Stderr: io.Discard})
		if !errors.Is(err, errFull) {
			t.Errorf("failing after %d bytes: err = %v, want the writer's", n, err)
		}
	}
}
