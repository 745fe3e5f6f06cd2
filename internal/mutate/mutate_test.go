package mutate

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// demo returns the files of the project's own example archive.
func demo(t *testing.T) []File {
	t.Helper()
	var fs []File
	for _, s := range []string{".meta", ".0", ".1", ".index"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "example", "demo"+s))
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, File{s, b})
	}
	return fs
}

func TestRecordsWalkWholeFiles(t *testing.T) {
	for _, f := range demo(t) {
		recs := Records(f.Suffix, f.Data)
		if len(recs) < 2 {
			t.Fatalf("%s: %d records", f.Suffix, len(recs))
		}
		if recs[0].Kind != "label" {
			t.Errorf("%s: first record is %s", f.Suffix, recs[0].Kind)
		}
		end := recs[len(recs)-1].Off + recs[len(recs)-1].Len
		if end != len(f.Data) {
			t.Errorf("%s: records end at %d of %d bytes", f.Suffix, end, len(f.Data))
		}
		for i := 1; i < len(recs); i++ {
			if recs[i].Off != recs[i-1].Off+recs[i-1].Len {
				t.Errorf("%s: gap before record %d", f.Suffix, i)
			}
		}
	}
}

func TestArchiveDeterministic(t *testing.T) {
	fs := demo(t)
	a, b := Archive(fs, 1), Archive(fs, 1)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same files and seed give different mutants")
	}
	c := Archive(fs, 2)
	same := 0
	for i := range a {
		if a[i].Name == c[i].Name {
			same++
		}
	}
	if same == len(a) {
		t.Error("another seed flips the same bits everywhere")
	}
}

func TestArchiveMutants(t *testing.T) {
	fs := demo(t)
	orig := map[string][]byte{}
	for _, f := range fs {
		orig[f.Suffix] = f.Data
	}
	ms := Archive(fs, 1)
	names := map[string]bool{}
	fam := map[string]int{}
	for _, m := range ms {
		if names[m.Name] {
			t.Errorf("duplicate name %s", m.Name)
		}
		names[m.Name] = true
		fam[m.Family]++
		if m.Special == Bytes && bytes.Equal(m.Data, orig[m.Target]) {
			t.Errorf("%s changes nothing", m.Name)
		}
	}
	for _, f := range []string{"trunc", "cut", "flip", "len", "count", "json-len", "empty", "missing", "dir", "fifo", "symlink-loop", "sparse"} {
		if fam[f] == 0 {
			t.Errorf("no %s mutants", f)
		}
	}
	// every record boundary of every file is a truncation point
	for _, f := range fs {
		for _, r := range Records(f.Suffix, f.Data)[1:] {
			if !hasPrefix(ms, f.Suffix, "/trunc@", r.Off) {
				t.Errorf("%s: no truncation at %d", f.Suffix, r.Off)
			}
		}
	}
	// an instance domain claims 2^31 instances
	found := false
	for n := range names {
		if bytes.Contains([]byte(n), []byte("numinst=2^31@")) {
			found = true
		}
	}
	if !found {
		t.Error("no instance domain claiming 2^31 instances")
	}
	// every kind of record of every file has a flip and a cut
	for _, f := range fs {
		for _, r := range Records(f.Suffix, f.Data) {
			for _, family := range []string{"flip", "cut"} {
				ok := false
				for _, m := range ms {
					ok = ok || (m.Target == f.Suffix && m.Family == family && m.Kind == r.Kind)
				}
				if !ok {
					t.Errorf("%s: no %s of a %s record", f.Suffix, family, r.Kind)
				}
			}
		}
	}
	t.Logf("%d mutants: %v", len(ms), fam)
}

func hasPrefix(ms []Mutant, suffix, what string, off int) bool {
	want := suffix + what + itoa(off)
	for _, m := range ms {
		if m.Name == want {
			return true
		}
	}
	return false
}

func itoa(n int) string { return string(bytes.TrimSpace([]byte(fmtInt(n)))) }

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestWriteSpecials(t *testing.T) {
	fs := demo(t)
	dir := t.TempDir()
	for i, m := range Archive(fs, 1) {
		if m.Family == "flip" || m.Family == "cut" || m.Family == "trunc" || m.Family == "len" || m.Family == "count" || m.Family == "json-len" {
			continue
		}
		d := filepath.Join(dir, itoa(i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := m.Write(d, "x", fs); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		p := filepath.Join(d, "x"+m.Target)
		fi, err := os.Lstat(p)
		switch m.Special {
		case Missing:
			if err == nil {
				t.Errorf("%s: exists", m.Name)
			}
		case Directory:
			if err != nil || !fi.IsDir() {
				t.Errorf("%s: not a directory", m.Name)
			}
		case FIFO:
			if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("%s: not a FIFO", m.Name)
			}
		case SymlinkLoop:
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s: resolves", m.Name)
			}
		case Sparse:
			if err != nil || fi.Size() != SparseSize {
				t.Errorf("%s: size %v", m.Name, fi)
			}
		}
	}
}

func TestStream(t *testing.T) {
	// a stream of a header, three frames and END
	s := []byte("\x89PCPpipe\x00\x01\x00\x00")
	frame := func(kind byte, payload []byte) {
		h := make([]byte, 20)
		h[0] = kind
		h[4], h[5], h[6], h[7] = byte(len(payload)>>24), byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
		s = append(append(s, h...), payload...)
	}
	frame(1, bytes.Repeat([]byte{1}, 808))
	frame(2, bytes.Repeat([]byte{2}, 40))
	frame(6, bytes.Repeat([]byte{6}, 64))
	frame(0x7f, nil)
	fr := Frames(s)
	if len(fr) != 4 || fr[3].Kind != 0x7f {
		t.Fatalf("frames %+v", fr)
	}
	ms := Stream(s, 1)
	cuts := 0
	for _, m := range ms {
		if m.Family == "trunc" {
			cuts++
			if len(m.Data) >= len(s) {
				t.Errorf("%s is not shorter", m.Name)
			}
		}
	}
	if cuts != len(fr) {
		t.Errorf("%d cuts at %d frame boundaries", cuts, len(fr))
	}
	if !reflect.DeepEqual(ms, Stream(s, 1)) {
		t.Error("not deterministic")
	}
}

func TestSample(t *testing.T) {
	ms := Archive(demo(t), 1)
	s := Sample(ms, 2, 7)
	count := map[string]int{}
	for _, m := range s {
		count[m.Target+" "+m.Family+" "+m.Kind]++
	}
	for k, n := range count {
		if n > 2 {
			t.Errorf("%s: %d sampled", k, n)
		}
	}
	if !reflect.DeepEqual(s, Sample(ms, 2, 7)) {
		t.Error("sample not deterministic")
	}
	if len(Sample(ms, 0, 7)) != len(ms) {
		t.Error("per 0 is not everything")
	}
}
