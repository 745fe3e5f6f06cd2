package interop

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// dumpWordsDiffer are the damaged QA archives on which pmdumplog's words
// and ours differ, and why (docs/compatibility.md, "pmdumplog over every
// QA archive").
var dumpWordsDiffer = map[string]string{
	// a v3 record type in a v2 .meta and the reverse: libpcp reads on,
	// ours refuses the record
	"badmeta-6": "meta", "badmeta-7": "meta",
}

// TestDumpWordsLikePCP (issue 18): under pmdumplog's name, what pcpcat
// says about a damaged archive (standard error and exit status) is what
// pmdumplog says, in libpcp's words ("Illegal label record ...",
// "Corrupted record ...", "Empty archive log file", "Cannot locate end
// of archive ..."), with the values and with the label alone, on every
// archive of badarchives/ but those listed in dumpWordsDiffer.
func TestDumpWordsLikePCP(t *testing.T) {
	needPCP(t)
	bad := filepath.Join(filepath.Dir(qaDir), "badarchives")
	metas, _ := filepath.Glob(filepath.Join(bad, "*.meta"))
	if len(metas) < 30 {
		t.Fatalf("%d archives in %s", len(metas), bad)
	}
	same := 0
	for _, m := range metas {
		a := strings.TrimSuffix(m, ".meta")
		if dumpWordsDiffer[filepath.Base(a)] != "" {
			continue
		}
		ok := true
		// the values (a fetch) and the label alone (none)
		for _, view := range []string{"-a", "-l"} {
			p := run(slow, nil, "pmdumplog", view, a)
			o := run(slow, nil, ours("pmdumplog"), view, a)
			if p.stderr != o.stderr || p.code != o.code {
				t.Errorf("%s %s: pmdumplog says (exit %d)\n%s\nours (exit %d)\n%s", view, filepath.Base(a), p.code, p.stderr, o.code, o.stderr)
				ok = false
			}
		}
		if ok {
			same++
		}
	}
	t.Logf("%d damaged archives: the same words and exit status", same)
}

// TestLabelPIDMismatch: libpcp refuses an archive whose first volume or
// index names another pmlogger PID than its .meta; under pmdumplog's
// name ours says what pmdumplog says, and under its own it says which
// file and what (an index that disagrees is ignored, with a warning).
func TestLabelPIDMismatch(t *testing.T) {
	needPCP(t)
	for _, suffix := range []string{"0", "index"} {
		dir := t.TempDir()
		src := filepath.Join(qaDir, "ok-mv-foo")
		files, _ := filepath.Glob(src + ".*")
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(f, "."+suffix) {
				binary.BigEndian.PutUint32(b[8:], binary.BigEndian.Uint32(b[8:])+1) // the label's PID
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		a := filepath.Join(dir, "ok-mv-foo")
		p := run(slow, nil, "pmdumplog", "-l", a)
		o := run(slow, nil, ours("pmdumplog"), "-l", a)
		if p.code == 0 || p.stderr != o.stderr || p.code != o.code {
			t.Errorf(".%s: pmdumplog says (exit %d)\n%s\nours (exit %d)\n%s", suffix, p.code, p.stderr, o.code, o.stderr)
		}
		n := run(slow, nil, ours("pcpcat"), "-l", a)
		want := "label says pmlogger PID"
		if suffix == "0" && (n.code == 0 || !strings.Contains(n.stderr, want)) || suffix == "index" && (n.code != 0 || !strings.Contains(n.stderr, "index ignored")) {
			t.Errorf(".%s: pcpcat -l (exit %d):\n%s", suffix, n.code, n.stderr)
		}
	}
}

// TestDumpPDUTraceLikePCP (issue 18): pmdumplog -Dpdu traces each data
// record libpcp reads (the archive's last one first, as it locates the
// end): __pmPrintResult's dump of the result and the record's words as
// libpcp's buffer holds them after decoding (value blocks and v3
// timestamps turned to the host's order, events summarised). Under
// pmdumplog's name ours writes the same trace on every QA archive, the
// buffer addresses (libpcp's pointers) aside; PCP's QA test 482 reads
// values out of it. Positioning at -S and reading backwards (-r) read
// more records than ours traces (docs/compatibility.md).
func TestDumpPDUTraceLikePCP(t *testing.T) {
	needPCP(t)
	metas, _ := filepath.Glob(filepath.Join(qaDir, "*.meta"))
	if len(metas) < 100 {
		t.Fatalf("%d archives in %s", len(metas), qaDir)
	}
	addr := regexp.MustCompile(`0x[0-9a-f]+`)
	var traced atomic.Int32
	var archives []string
	for _, m := range metas {
		archives = append(archives, strings.TrimSuffix(m, ".meta"))
	}
	forEach(t, withoutBulky(t, archives), func(t *testing.T, a string) {
		args := []string{"-Dpdu", a}
		if filepath.Base(a) == "binning" {
			args = append(args, "sample.milliseconds") // as QA test 482 asks
		}
		p := run(slow, nil, "pmdumplog", args...)
		o := run(slow, nil, ours("pmdumplog"), args...)
		pe, oe := addr.ReplaceAllString(p.stderr, "ADDR"), addr.ReplaceAllString(o.stderr, "ADDR")
		if pe != oe || p.code != o.code {
			t.Errorf("pmdumplog -Dpdu %s: traces differ (exit %d, ours %d):\n%s", filepath.Base(a), p.code, o.code, firstDiff(pe, oe))
			return
		}
		if strings.Contains(oe, "__pmLogRead timestamp=") {
			traced.Add(1)
		}
	})
	if traced.Load() < 100 {
		t.Errorf("only %d archives traced any record", traced.Load())
	}
	t.Logf("%d QA archives: the same -Dpdu trace", traced.Load())
}
