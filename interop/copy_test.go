package interop

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// faithfulFlags are the pmdumplog views a copy must reproduce exactly (the
// index, -t, is ours to rebuild).
var faithfulFlags = []string{"-d", "-i", "-L", "-m", "-s", "-e", "-h", "-I"}

// TestCopyFaithful: a copy through `pcpcat -o` and through
// `pcpcat | pcpcat -o` reads back identically under pmdumplog, and
// pmlogcheck finds nothing in it that it does not find in the input. A
// copy of one of the heavy archives whose volumes and .meta are the
// input's byte for byte is not dumped (PCPTOOLS_QA_FULL=1 dumps it): the
// two dumps would be 1.4 GB of text each, the same by construction.
func TestCopyFaithful(t *testing.T) {
	needPCP(t)
	archives := qaArchives(t)
	// A copy whose volumes and .meta are the input's byte for byte
	// (decompressed) reads back as the input does: pmdumplog's views are a
	// function of those bytes, and pmlogcheck checks the index, the one
	// file that is new. Such a copy is dumped on every eighth archive,
	// and on all with PCPTOOLS_QA_FULL=1; the dump of every other copy is
	// compared.
	dumpSame := rotation(archives, 8)
	var total, good, same atomic.Int32
	forEach(t, archives, func(t *testing.T, a string) {
		total.Add(1)
		var want string // pmdumplog of the input, made when first needed
		wantCheck := map[string]bool{}
		for _, f := range checkFindings(a) {
			wantCheck[f] = true
		}
		dir := t.TempDir()
		direct := filepath.Join(dir, "direct")
		r := run(slow, nil, ours("pcpcat"), a, "-o", direct)
		if r.code != 0 {
			t.Fatalf("pcpcat %s -o: exit %d: %s", a, r.code, r.stderr)
		}
		outs := []string{direct}
		// The pipe is the same code on every archive; on the two heavy
		// ones (minutes of pmdumplog each) it is left to PCPTOOLS_QA_FULL.
		if !heavy[filepath.Base(a)] || os.Getenv("PCPTOOLS_QA_FULL") != "" {
			piped := filepath.Join(dir, "piped")
			r = run(slow, nil, "sh", "-c", `"$0" "$1" | "$0" -o "$2"`, ours("pcpcat"), a, piped)
			if r.code != 0 {
				t.Fatalf("pcpcat %s | pcpcat -o: exit %d: %s", a, r.code, r.stderr)
			}
			outs = append(outs, piped)
		}
		ok := true
		for _, out := range outs {
			mayShortcut := !dumpSame(a, 0) || (heavy[filepath.Base(a)] && os.Getenv("PCPTOOLS_QA_FULL") == "")
			if mayShortcut && sameFiles(t, a, out) {
				// Every volume and the .meta, byte for byte the input's
				// (decompressed): pmdumplog cannot tell them apart, and
				// its values view of the heavy ones takes minutes of CPU.
				same.Add(1)
				t.Logf("%s: volumes and .meta identical to the input's; views not dumped", filepath.Base(out))
			} else {
				if want == "" {
					want = dumpOf(t, a, faithfulFlags...)
				}
				if d := sameDump(want, dumpOf(t, out, faithfulFlags...), a, out); d != "" {
					ok = false
					t.Errorf("%s: pmdumplog %v differs: %s", filepath.Base(out), faithfulFlags, d)
				}
			}
			for _, f := range checkFindings(out) {
				if !wantCheck[f] {
					ok = false
					t.Errorf("%s: pmlogcheck reports %q, not reported on the input", filepath.Base(out), f)
				}
			}
		}
		if ok {
			good.Add(1)
		}
	})
	t.Logf("faithful copies: %d of %d archives (%d copies byte for byte the input, not dumped)", good.Load(), total.Load(), same.Load())
}

// TestV3LikePmlogextract: `pcpcat -V 3` and `pmlogextract -V 3` give the
// same archive under pmdumplog, wherever pmlogextract's copy is faithful.
func TestV3LikePmlogextract(t *testing.T) {
	needPCP(t)
	extract := "/usr/lib/pcp/bin/pmlogextract"
	if _, err := os.Stat(extract); err != nil {
		t.Fatalf("pmlogextract missing: %v", err)
	}
	var compared, same atomic.Int32
	forEach(t, lightArchives(t), func(t *testing.T, a string) {
		dir := t.TempDir()
		theirs := filepath.Join(dir, "theirs")
		if r := run(slow, nil, extract, "-V", "3", a, theirs); r.code != 0 {
			t.Skipf("pmlogextract -V 3 fails on this archive: %s", strings.TrimSpace(r.stderr))
		}
		// Only where pmlogextract's own plain copy is faithful.
		plain := filepath.Join(dir, "plain")
		if r := run(slow, nil, extract, a, plain); r.code != 0 {
			t.Skip("pmlogextract cannot copy this archive")
		}
		if d := sameOutputs(t, a, plain, faithfulFlags...); d != "" {
			t.Skip("pmlogextract's copy is not faithful here")
		}
		// On a few archives (mirage-3, pcp-atop-boot, 20180102, 20201109)
		// pmlogextract 6.0.3 writes v3 deltas over unsorted instance lists
		// that pmdumplog cannot read back (it aborts in malloc or
		// segfaults): that copy is not faithful either.
		if _, code, stderr := outputOf(t, "pmdumplog", "-a", "-I", theirs); code != 0 {
			t.Skipf("pmdumplog cannot read pmlogextract's -V 3 output (exit %d %s)", code, strings.TrimSpace(stderr))
		}
		mine := filepath.Join(dir, "mine")
		if r := run(slow, nil, ours("pcpcat"), "-V", "3", a, "-o", mine); r.code != 0 {
			t.Fatalf("pcpcat -V 3: exit %d: %s", r.code, r.stderr)
		}
		compared.Add(1)
		if d := sameOutputs(t, theirs, mine, faithfulFlags...); d != "" {
			t.Errorf("pcpcat -V 3 differs from pmlogextract -V 3: %s", d)
			return
		}
		same.Add(1)
	})
	t.Logf("-V 3 identical to pmlogextract: %d of %d compared", same.Load(), compared.Load())
}

// sameFiles reports whether the copy out has the input archive a's data
// volumes and .meta file, byte for byte, the input's decompressed (xz
// volumes through xz -dc), and no volume more or less. The index is left
// out: the copy rebuilds it.
func sameFiles(t *testing.T, a, out string) bool {
	t.Helper()
	ins, err := filepath.Glob(a + ".*")
	if err != nil {
		t.Fatal(err)
	}
	outs, _ := filepath.Glob(out + ".*")
	n := 0
	for _, in := range ins {
		suffix := strings.TrimPrefix(in, a)
		plain := strings.TrimSuffix(suffix, ".xz")
		if plain == ".index" {
			continue
		}
		n++
		if !sameBytes(t, in, out+plain) {
			return false
		}
	}
	for _, o := range outs {
		if !strings.HasSuffix(o, ".index") {
			n--
		}
	}
	return n == 0
}

// sameBytes compares a file, decompressed by xz when its name says so,
// with a plain one, streaming both.
func sameBytes(t *testing.T, in, plain string) bool {
	t.Helper()
	pf, err := os.Open(plain)
	if err != nil {
		return false
	}
	defer pf.Close()
	var r io.Reader
	if strings.HasSuffix(in, ".xz") {
		cmd := exec.Command("xz", "-dc", in)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		r = stdout
	} else {
		f, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r = f
	}
	return sameReaders(bufio.NewReaderSize(r, 1<<20), bufio.NewReaderSize(pf, 1<<20))
}

func sameReaders(a, b io.Reader) bool {
	ba, bb := make([]byte, 1<<16), make([]byte, 1<<16)
	for {
		na, ea := io.ReadFull(a, ba)
		nb, eb := io.ReadFull(b, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false
		}
		if ea != nil || eb != nil { // both at their ends, or a read failed
			end := func(e error) bool { return e == io.EOF || e == io.ErrUnexpectedEOF }
			return end(ea) && end(eb)
		}
	}
}
