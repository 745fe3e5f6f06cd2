package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoDataLikePCP: an archive whose volume holds its label and no data
// record (a pmlogger killed before its first sample, a volume cut after
// its label). libpcp will not open it: under PCP's names each of our tools
// says what PCP's says and exits as it does, writing nothing where PCP's
// write nothing; under our own names a copy refuses to write an archive
// PCP could not open (pcpcat -o wrote one, without a word, until the
// eighteenth session). An archive with no data volume at all (its .meta
// and .index alone) libpcp refuses in other words ("Missing PCP archive
// log file"), and pmlogextract and pmlogrewrite do not skip it: ours said
// "Empty archive log file", and pmlogextract wrote the other inputs,
// until the twenty-first.
func TestNoDataLikePCP(t *testing.T) {
	needPCP(t)
	// (a .meta or .index cut to 5 bytes, or to its label, with the data
	// whole: libpcp calls each empty too; ours took them under PCP's
	// names until the twenty-first session)
	type cut int // a file's length: whole, its label alone, or 5 bytes
	const (
		whole cut = iota
		label
		five
		none
	)
	for _, sh := range []struct {
		name             string
		vol, meta, index cut
		nativeRefuses    bool // pcpcat -o and the others refuse it too
	}{
		{"ok-foo", label, whole, none, true},
		{"20041125", label, whole, none, true},
		{"ok-foo", none, whole, none, true},
		{"20041125", none, whole, none, true},
		{"ok-foo", whole, five, whole, true},
		{"ok-foo", whole, label, whole, true},
		{"ok-foo", whole, whole, five, false},
		{"ok-foo", whole, whole, label, false},
	} {
		name := sh.name
		shape := fmt.Sprintf("%s (volume %d, .meta %d, .index %d)", name, sh.vol, sh.meta, sh.index)
		src := filepath.Join(qaDir, name)
		dir := t.TempDir()
		in := filepath.Join(dir, name)
		for _, f := range []struct {
			ext string
			c   cut
		}{{".0", sh.vol}, {".meta", sh.meta}, {".index", sh.index}} {
			if f.c == none {
				continue
			}
			b, err := os.ReadFile(src + f.ext)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			switch f.c {
			case label: // its length word says how long it is
				b = b[:int(b[0])<<24|int(b[1])<<16|int(b[2])<<8|int(b[3])]
			case five:
				b = b[:5]
			}
			if err := os.WriteFile(in+f.ext, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		good := filepath.Join(qaDir, "ok-foo")
		conf := filepath.Join(dir, "none.conf")
		if err := os.WriteFile(conf, []byte("global { hostname -> elsewhere }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			tool string
			args []string // OUT stands for the output
		}{
			{"pmdumplog", []string{"-a", in}},
			{"pmdumplog", []string{"-l", in}},
			{"pmdumplog", []string{"-d", in}},
			{"pmlogsummary", []string{in}},
			{"pmlogcheck", []string{in}},
			{"pmlogextract", []string{in, "OUT"}},
			{"pmlogextract", []string{in, good, "OUT"}},
			{"pmlogrewrite", []string{"-c", conf, in, "OUT"}},
			{"pmlogreduce", []string{in, "OUT"}},
		} {
			var got [2]string
			var files [2][]string
			for i, bin := range []string{pcpTool(t, c.tool), ours(c.tool)} {
				odir := t.TempDir()
				args := make([]string, len(c.args))
				for k, a := range c.args {
					args[k] = strings.ReplaceAll(a, "OUT", filepath.Join(odir, "out"))
				}
				r := run(slow, nil, bin, args...)
				got[i] = strings.ReplaceAll(strings.ReplaceAll(r.stderr, odir, "OUT"), dir, "DIR") + "exit " + string(rune('0'+r.code))
				es, _ := os.ReadDir(odir)
				for _, e := range es {
					files[i] = append(files[i], e.Name())
				}
			}
			if got[0] != got[1] {
				t.Errorf("%s: %s %v:\nours:\n%s\nPCP's:\n%s", shape, c.tool, c.args, got[1], got[0])
			}
			if strings.Join(files[0], " ") != strings.Join(files[1], " ") {
				t.Errorf("%s: %s %v: ours wrote %v, PCP's %v", shape, c.tool, c.args, files[1], files[0])
			}
		}
		if !sh.nativeRefuses {
			continue
		}
		// our own names: no archive PCP cannot open
		for _, c := range [][]string{{"pcpcat", in, "-o"}, {"pcpextract", in, "-o"}, {"pcprewrite", "-c", conf, in, "-o"}} {
			odir := t.TempDir()
			out := filepath.Join(odir, "out")
			r := run(slow, nil, ours(c[0]), append(c[1:], out)...)
			es, _ := os.ReadDir(odir)
			if r.code == 0 || len(es) != 0 || !strings.Contains(r.stderr, in) {
				t.Errorf("%s: %v: exit %d, %d files written, stderr %q: want a failure naming the input and nothing written", shape, c, r.code, len(es), r.stderr)
			}
		}
	}
}
