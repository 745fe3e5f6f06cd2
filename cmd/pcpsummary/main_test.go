package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/scripttest"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/pipe"
)

func TestMain(m *testing.M) { scripttest.Main(m, "pcpsummary", "pmlogsummary", run) }

// TestScripts runs the command-line sessions in testdata/script.
func TestScripts(t *testing.T) { scripttest.Scripts(t) }

// TestStream: with no archive named, pcpsummary summarises the record
// stream on standard input as it summarises the archive.
func TestStream(t *testing.T) {
	example := "../../testdata/example/demo"
	a, err := format.Open(example)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "stream"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pipe.NewWriter(f)
	it := a.Records()
	for it.Next() {
		if err := w.Write(it.At()); err != nil {
			t.Fatal(err)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	var fromStream, fromArchive, errb bytes.Buffer
	if code := run([]string{"pcpsummary", "-a", "-B", "3"}, f, &fromStream, &errb); code != toolio.ExitOK {
		t.Fatalf("stream: exit %d: %s", code, errb.String())
	}
	if code := run([]string{"pcpsummary", "-a", "-B", "3", example}, nil, &fromArchive, &errb); code != toolio.ExitOK {
		t.Fatalf("archive: exit %d: %s", code, errb.String())
	}
	if fromStream.String() != fromArchive.String() {
		t.Errorf("stream:\n%s\narchive:\n%s", fromStream.String(), fromArchive.String())
	}
}
