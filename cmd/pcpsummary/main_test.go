package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/stream/pipe"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"pcpsummary":   func() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
		"pmlogsummary": func() { os.Exit(run(append([]string{"pmlogsummary"}, os.Args[1:]...), os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the command-line sessions in testdata/script.
func TestScripts(t *testing.T) {
	example, err := filepath.Abs("../../testdata/example/demo")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLE", example)
			env.Setenv("TZ", "UTC")
			return nil
		},
	})
}

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
