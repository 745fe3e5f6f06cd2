package rules

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/format"
)

// fuzzMeta returns the metadata of src-rattle (the archive own_cases.txt
// is written for) and of omnibus_v3 (label sets, v3), or nothing when PCP's
// QA archives are absent: then only parsing is fuzzed.
func fuzzMeta(f *testing.F) []*format.Metadata {
	var out []*format.Metadata
	for _, n := range []string{"src-rattle", "rattle", "omnibus_v3"} {
		a, err := format.Open(filepath.Join(testsuite, "archives", n), format.WithWarn(func(error) {}))
		if err != nil {
			continue
		}
		if m, err := a.Meta(); err == nil {
			out = append(out, m)
		}
	}
	return out
}

// fuzzSeeds adds every file of dir whose name ends in ext, and each
// non-comment line of lines files.
func fuzzSeeds(f *testing.F, ext string, dirs []string, lines []string) {
	for _, d := range dirs {
		ps, _ := filepath.Glob(filepath.Join(d, "*"+ext))
		for _, p := range ps {
			if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
				f.Add(string(b))
			}
		}
	}
	for _, p := range lines {
		fh, err := os.Open(p)
		if err != nil {
			continue
		}
		s := bufio.NewScanner(fh)
		for s.Scan() {
			if l := s.Text(); l != "" && !strings.HasPrefix(l, "//") {
				f.Add(l)
			}
		}
		fh.Close()
	}
}

// FuzzParsePmlogrewrite: the pmlogrewrite configuration grammar never
// panics, a failure is an error naming the file, and what parses compiles
// against real metadata or fails with an error, never a panic.
func FuzzParsePmlogrewrite(f *testing.F) {
	fuzzSeeds(f, ".conf", []string{"../interop/testdata/rewrite", stockConfig}, []string{"testdata/own_cases.txt"})
	f.Add("metric 2.*.* { pmid -> 102.*.* }")
	f.Add("indom 60.1 { inst 1 -> 2 iname \"cpu1\" -> \"cpu2\" }")
	f.Add("label 1 { label \"a\" -> \"b\" value 1 -> 2 }")
	f.Add("text 60.0.1 { delete }")
	metas := fuzzMeta(f)
	f.Fuzz(func(t *testing.T, src string) {
		cfg, err := ParsePmlogrewrite("fuzz.conf", src)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.conf") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, m := range metas {
			Compile(cfg, m, CompileOptions{})
		}
	})
}

// FuzzParseExpr: the same for the expr-lang rules files (docs/rules.md).
func FuzzParseExpr(f *testing.F) {
	fuzzSeeds(f, ".rules", []string{"../interop/testdata/rewrite", "testdata"}, nil)
	f.Add("metric \"kernel.all.load\" { value = value * 2 }")
	f.Add("")
	metas := fuzzMeta(f)
	f.Fuzz(func(t *testing.T, src string) {
		cfg, err := ParseExpr("fuzz.rules", src)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.rules") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, m := range metas {
			Compile(cfg, m, CompileOptions{})
		}
	})
}
