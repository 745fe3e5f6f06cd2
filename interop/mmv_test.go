package interop

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pcptools/pcptools/pipe"
	"github.com/pcptools/pcptools/stream"
)

const mmvdump = "/usr/lib/pcp/pmdas/mmv/mmvdump"

// mmvFixtures writes MMV files with PCP's own libpcp_mmv, through
// python3-pcp's pcp.mmv (Debian's /usr/bin/python3): v1 (every type,
// indoms, strings, elapsed, each flag), v2 (long names) and v3 (labels).
func mmvFixtures(t *testing.T) []string {
	t.Helper()
	needPCP(t)
	for _, p := range []string{mmvdump, "/usr/bin/python3"} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("required in CI and missing: %v", err)
			}
			t.Skipf("missing: %v", err)
		}
	}
	dir := t.TempDir()
	out, err := exec.Command("/usr/bin/python3", "../mmv/testdata/mkfixtures.py", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("making MMV fixtures: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "mmv", "*"))
	if len(files) != 6 {
		t.Fatalf("made %d MMV fixtures, want 6: %v", len(files), files)
	}
	return files
}

// TestMMVDumpMatchesMmvdump: pcpmmv dump prints what mmvdump prints, byte
// for byte, with the same exit status.
func TestMMVDumpMatchesMmvdump(t *testing.T) {
	for _, f := range mmvFixtures(t) {
		t.Run(filepath.Base(f), func(t *testing.T) { sameMMVDump(t, f) })
	}
}

func sameMMVDump(t *testing.T, f string) {
	t.Helper()
	want := run(time.Minute, nil, mmvdump, f)
	got := run(time.Minute, nil, ours("pcpmmv"), "dump", f)
	if want.code != got.code || want.stdout != got.stdout {
		t.Errorf("%s: mmvdump exit %d, pcpmmv exit %d\n%s", f, want.code, got.code,
			mmvDiff(want.stdout, got.stdout, "mmvdump", "pcpmmv"))
	}
	if got.stderr != "" {
		t.Errorf("pcpmmv wrote to stderr: %s", got.stderr)
	}
}

// TestMMVDumpDamagedMatchesMmvdump: damage that mmvdump detects (files cut
// short, bad magic, version, generations, TOC counts, cluster, and
// offsets past the end that do not overflow) gives the same messages and
// status from both tools.
func TestMMVDumpDamagedMatchesMmvdump(t *testing.T) {
	files := mmvFixtures(t)
	dir := t.TempDir()
	for _, f := range []string{files[0], files[3], files[4]} { // v1flags, v2long, v3labels
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		type edit struct {
			name string
			fn   func([]byte) []byte
		}
		put := func(off int, v ...byte) func([]byte) []byte {
			return func(b []byte) []byte { b = append([]byte(nil), b...); copy(b[off:], v); return b }
		}
		edits := []edit{
			{"header-only", func(b []byte) []byte { return b[:40] }},
			{"short-header", func(b []byte) []byte { return b[:39] }},
			{"magic", put(0, 'M', 'M', 'X')},
			{"version", put(4, 9)},
			{"generation", put(16, 1, 2, 3)},
			{"tocs", put(24, 1, 0, 0, 0)},
			{"tocs-past-end", put(24, 0xff, 0xff, 0, 0)},
			{"cluster", put(36, 0, 0x10, 0, 0)},
			{"toc-count-zero", put(44, 0, 0, 0, 0)},
			{"toc-type", put(40, 77)},
			{"toc-offset-past-end", put(48, 0, 0, 0, 0x10)},
		}
		// mmvdump prints the string section's slots without checking them
		// against the file's size (it checks at the value stride), so
		// files are cut only before that section, where it reads safely.
		strs := len(data)
		for i := 0; i < int(binary.NativeEndian.Uint32(data[24:])); i++ {
			at := 40 + 16*i
			if binary.NativeEndian.Uint32(data[at:]) == 5 {
				strs = int(binary.NativeEndian.Uint64(data[at+8:]))
			}
		}
		for n := 1; n < 8; n++ {
			cut := 40 + (strs-40)*n/8
			edits = append(edits, edit{"cut" + strconv.Itoa(n), func(b []byte) []byte { return b[:cut] }})
		}
		for _, e := range edits {
			p := filepath.Join(dir, filepath.Base(f)+"-"+e.name)
			if err := os.WriteFile(p, e.fn(data), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Run(filepath.Base(p), func(t *testing.T) { sameMMVDump(t, p) })
		}
	}
}

// mmvDiff shows the first line where two outputs differ.
func mmvDiff(want, got, wantName, gotName string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return fmt.Sprintf("line %d:\n  %s: %q\n  %s: %q", i+1, wantName, wl, gotName, gl)
		}
	}
	return "same"
}

// TestMMVRecordStream: pcpmmv record with no -o writes the record stream,
// sample by sample (a reader sees the first sample before the recorder
// ends); the stream read back describes the metrics as the archive
// recorded from the same files does.
func TestMMVRecordStream(t *testing.T) {
	files := mmvFixtures(t)
	dir := filepath.Dir(files[0])
	out := filepath.Join(t.TempDir(), "arch")
	if r := run(time.Minute, nil, ours("pcpmmv"), "record", "-t", "100ms", "-s", "2", dir, "-o", out); r.code != 0 {
		t.Fatalf("record to an archive: exit %d: %s", r.code, r.stderr)
	}
	streamed := filepath.Join(t.TempDir(), "streamed")
	sh := ours("pcpmmv") + " record -t 100ms -s 2 " + dir + " | " + ours("pcpcat") + " --no-sync -o " + streamed
	if b, err := exec.Command("sh", "-c", sh).CombinedOutput(); err != nil {
		t.Fatalf("record to the stream: %v: %s", err, b)
	}
	meta := func(a string) string {
		r := run(time.Minute, nil, ours("pcpcat"), "-d", "-i", a)
		if r.code != 0 {
			t.Fatalf("%s: %s", a, r.stderr)
		}
		// instance domain records carry the sample's time
		return clockTime.ReplaceAllString(r.stdout, "TIME")
	}
	if w, g := meta(out), meta(streamed); w != g || !strings.Contains(g, "mmv.") {
		t.Errorf("metadata through the stream:\n%s\nin the archive:\n%s", g, w)
	}
	// Live: the first sample reaches the reader while the recorder runs.
	cmd := exec.Command(ours("pcpmmv"), "record", "-t", "1s", "-s", "30", dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	done := make(chan error, 1)
	go func() {
		pr := pipe.NewReader(stdout)
		for pr.Next() {
			if _, ok := pr.At().(*stream.Result); ok {
				done <- nil
				return
			}
		}
		done <- fmt.Errorf("the stream ended without a result: %v", pr.Err())
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("reading the live stream: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no result on the stream after 10 s of a 30 s recording: not flushed per sample")
	}
}

var clockTime = regexp.MustCompile(`(?m)^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]+`)
