package rewrite

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/pipe"
	"github.com/pcptools/pcptools/rules"
	"github.com/pcptools/pcptools/stream"
)

const (
	qaDir  = "/var/lib/pcp/testsuite/archives"
	badDir = "/var/lib/pcp/testsuite/badarchives"
)

// qaBases returns the archives (base names) in dir.
func qaBases(t *testing.T, dir string) []string {
	t.Helper()
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PCP QA archives missing in CI: %v", err)
		}
		t.Skip(err)
	}
	metas, _ := filepath.Glob(filepath.Join(dir, "*.meta*"))
	seen := map[string]bool{}
	var out []string
	for _, m := range metas {
		b := regexp.MustCompile(`\.meta(\.[a-z]+)?$`).ReplaceAllString(m, "")
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	sort.Strings(out)
	return out
}

// touchAll is a plan that touches most metrics of meta, one way or
// another by turns: a retype (64-bit values go the quick way, others the
// general one), a delete, an indom collapse to the first instance, a
// rescale, and some left alone (runs copied whole).
func touchAll(meta *format.Metadata) string {
	var sb strings.Builder
	for i, d := range meta.Descs {
		switch i % 6 {
		case 0:
			switch d.Type {
			case stream.Type64, stream.TypeU64:
				fmt.Fprintf(&sb, "metric %s { type -> DOUBLE }\n", d.PMID)
			case stream.Type32, stream.TypeU32:
				fmt.Fprintf(&sb, "metric %s { type -> 64 }\n", d.PMID)
			}
		case 1:
			fmt.Fprintf(&sb, "metric %s { delete }\n", d.PMID)
		case 2:
			if d.InDom != stream.InDomNull {
				fmt.Fprintf(&sb, "metric %s { indom -> NULL output first }\n", d.PMID)
			}
		case 3:
			if d.Type == stream.TypeU64 && d.Units.DimSpace() == 1 && d.Units.DimTime() == 0 && d.Units.DimCount() == 0 {
				fmt.Fprintf(&sb, "metric %s { units -> 1,0,0,MBYTE,0,0 RESCALE }\n", d.PMID)
			}
		}
	}
	return sb.String()
}

// hidden hides the reader's CheckDeferrer: the reader then checks every
// result itself.
type hidden struct{ stream.Iterator }

// rewriteTranscript rewrites base with src's rules and sums up what comes
// out; deferred says whether the reader leaves the checks to the
// rewriter. With viaStream, the rewriter reads base's records from a pipe
// stream (what `pcpcat base | pcprewrite` reads) rather than the archive.
func rewriteTranscript(t *testing.T, base string, plan *rules.Plan, meta *format.Metadata, deferred, viaStream bool) string {
	a, err := format.Open(base)
	if err != nil {
		return "open: " + err.Error()
	}
	it := a.Records()
	defer it.Close()
	var in stream.Iterator = it
	if viaStream {
		if in, err = streamOf(it); err != nil {
			return "stream: " + err.Error()
		}
	}
	if !deferred {
		in = hidden{in}
	}
	rw := New(in, plan, Options{Meta: meta})
	if (rw.checks != nil) != deferred {
		t.Fatalf("%s: checks deferred %v, want %v", base, rw.checks != nil, deferred)
	}
	var sb strings.Builder
	for rw.Next() {
		switch r := rw.At().(type) {
		case *stream.Result:
			fmt.Fprintf(&sb, "result %s %d %x\n", r.T, len(r.Body), sha256.Sum256(r.Body))
		case *stream.Mark:
			fmt.Fprintf(&sb, "mark %s\n", r.T)
		default:
			fmt.Fprintf(&sb, "%s\n", r.Kind())
		}
	}
	if err := rw.Err(); err != nil {
		fmt.Fprintf(&sb, "error: %v\n", err)
	}
	return sb.String()
}

// streamOf writes the records of an archive's iterator to a pipe stream,
// damaged results as they are (its checks deferred and never made: the
// stream's writer does not walk results), and returns the stream's
// records as pcprewrite reads its standard input.
func streamOf(it stream.CloserIterator) (stream.Iterator, error) {
	if !it.(stream.CheckDeferrer).DeferChecks() {
		return nil, errors.New("DeferChecks refused")
	}
	var buf bytes.Buffer
	w := pipe.NewWriter(&buf)
	for it.Next() {
		if err := w.Write(it.At()); err != nil {
			return nil, err
		}
	}
	if err := it.Err(); err != nil {
		return nil, err // (framing damage: the archive's own check)
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return pipe.Concatenated(&buf, "standard input"), nil
}

func planFor(t *testing.T, base string) (*rules.Plan, *format.Metadata, bool) {
	a, err := format.Open(base)
	if err != nil {
		return nil, nil, false
	}
	meta, err := a.Meta()
	if err != nil {
		return nil, nil, false
	}
	src := touchAll(meta)
	if src == "" {
		return nil, nil, false
	}
	cfg, err := rules.ParsePmlogrewrite("touch.conf", src)
	if err != nil {
		t.Fatalf("%s: %v", base, err)
	}
	plan, err := rules.Compile(cfg, meta, rules.CompileOptions{})
	if err != nil {
		t.Logf("%s: %v", base, err)
		return nil, nil, false
	}
	return plan, meta, true
}

// TestDeferredChecksAsReader: with the reader's checks left to the
// rewriter, every QA archive, good and damaged, rewrites to the same
// records and fails with the same error, naming the same file and offset,
// as when the reader checks each result itself.
func TestDeferredChecksAsReader(t *testing.T) {
	bases := append(qaBases(t, qaDir), qaBases(t, badDir)...)
	n := 0
	for _, base := range bases {
		if vols, _ := filepath.Glob(base + ".[0-9]*.*"); len(vols) > 0 {
			continue // compressed: read the same way, only slower
		}
		plan, meta, ok := planFor(t, base)
		if !ok {
			continue
		}
		n++
		start := time.Now()
		for _, viaStream := range []bool{false, true} {
			want := rewriteTranscript(t, base, plan, meta, false, viaStream)
			if got := rewriteTranscript(t, base, plan, meta, true, viaStream); got != want {
				t.Errorf("%s (stream %v): deferred checks give\n%s\nwant\n%s", base, viaStream, clip(got), clip(want))
			}
		}
		if d := time.Since(start); d > 300*time.Millisecond {
			t.Logf("%s: %v", base, d)
		}
	}
	if n < 100 {
		t.Errorf("only %d archives compared", n)
	}
}

// TestDeferredChecksFindDamage: a result that frames but has a value
// pointer outside it, in turn in each value set of a record two thirds
// into a QA archive, is reported as the reader reports it, whatever the
// rules do with that set (copy it in a run, compute it, delete it, keep
// one instance of it).
func TestDeferredChecksFindDamage(t *testing.T) {
	qaBases(t, qaDir)                       // (skips, or fails in CI, without them)
	src := filepath.Join(qaDir, "20180102") // Linux PMDA, many value blocks
	plan, meta, ok := planFor(t, src)
	if !ok {
		t.Fatal("no plan for", src)
	}
	vol, err := os.ReadFile(src + ".0")
	if err != nil {
		t.Fatal(err)
	}
	// The record from two thirds in with the most sets with value blocks,
	// and the file offset of the last pointer of each of those sets.
	version := 2
	var ptrs []int
	for off := format.LabelSize(version); off+4 <= len(vol); {
		n := int(binary.BigEndian.Uint32(vol[off:]))
		if n <= 0 || off+n > len(vol) {
			break
		}
		var res stream.Result
		rec := vol[off : off+n]
		mark, err := format.DecodeData(rec, version, &res)
		if err != nil {
			t.Fatal(err)
		}
		if !mark && off > len(vol)*2/3 {
			offs, err := res.Frame(nil)
			if err != nil {
				t.Fatal(err)
			}
			bodyAt := off + (cap(rec) - cap(res.Body))
			var here []int
			for _, o := range offs[:len(offs)-1] {
				vs := res.VSetAt(int(o))
				if vs.NumVal > 0 && vs.ValFmt != stream.ValInsitu {
					here = append(here, bodyAt+int(o)+12+4+8*(int(vs.NumVal)-1))
				}
			}
			if len(here) > len(ptrs) {
				ptrs = here
			}
		}
		off += n
	}
	if len(ptrs) < 6 {
		t.Fatalf("only %d sets with value blocks", len(ptrs))
	}
	dir := t.TempDir()
	for i, p := range ptrs {
		if i%3 != 0 && i > 12 {
			continue
		}
		base := filepath.Join(dir, fmt.Sprint("d", i))
		bad := append([]byte(nil), vol...)
		binary.BigEndian.PutUint32(bad[p:], 0xfffff0)
		for _, suf := range []string{".meta", ".index"} {
			b, err := os.ReadFile(src + suf)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(base+suf, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(base+".0", bad, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, viaStream := range []bool{false, true} {
			want := rewriteTranscript(t, base, plan, meta, false, viaStream)
			got := rewriteTranscript(t, base, plan, meta, true, viaStream)
			if !strings.Contains(want, "error: ") {
				t.Fatalf("set %d (stream %v): the reader does not see the damage:\n%s", i, viaStream, clip(want))
			}
			if got != want {
				t.Errorf("set %d (stream %v): deferred checks give\n%s\nwant\n%s", i, viaStream, clip(got[max(0, len(got)-600):]), clip(want[max(0, len(want)-600):]))
			}
			if i == 0 {
				t.Logf("stream %v: %s", viaStream, want[strings.LastIndex(want, "error: "):])
			}
		}
	}
}

func clip(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "..."
	}
	return s
}
