package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/format"
)

// copyWith copies the archive at base to out through the format package,
// keeping its volumes.
func copyWith(base, out string, opts format.WriterOptions) error {
	a, err := format.Open(base)
	if err != nil {
		return err
	}
	it := a.Records()
	defer it.Close()
	opts.KeepVolumes = true
	w, err := format.Create(out, opts)
	if err != nil {
		return err
	}
	for it.Next() {
		if err := w.Write(it.At()); err != nil {
			w.Abort()
			return err
		}
	}
	if err := it.Err(); err != nil {
		w.Abort()
		return fmt.Errorf("reading %s: %w", base, err)
	}
	return w.Close()
}

// TestXzVolumesReadByPCP: an archive written with xz data volumes
// (WriterOptions.Xz: blocks with an index, compressed in parallel) reads
// under PCP 6.0.3's pmdumplog exactly as the same archive written plain,
// and pmlogcheck finds nothing in it that it does not find in the plain
// one. One archive in ten of the QA suite, plus bozo-20170904, whose 40 MiB
// volume makes eleven blocks, read whole and through a window (-S/-T,
// which libpcp serves by seeking with the temporal index).
func TestXzVolumesReadByPCP(t *testing.T) {
	needPCP(t)
	all := lightArchives(t)
	var sample []string
	for i := 0; i < len(all); i += 10 {
		sample = append(sample, all[i])
	}
	sample = append(sample, filepath.Join(qaDir, "bozo-20170904"))
	forEach(t, sample, func(t *testing.T, a string) {
		dir := t.TempDir()
		plain, xz := filepath.Join(dir, "plain"), filepath.Join(dir, "xz")
		if err := copyWith(a, plain, format.WriterOptions{NoSync: true}); err != nil {
			t.Skipf("plain copy fails, nothing to compare: %v", err)
		}
		if err := copyWith(a, xz, format.WriterOptions{NoSync: true, Xz: true}); err != nil {
			t.Fatalf("xz copy: %v", err)
		}
		vols, _ := filepath.Glob(xz + ".[0-9]*")
		for _, v := range vols {
			if !strings.HasSuffix(v, ".xz") {
				t.Errorf("%s: a data volume without .xz", v)
			}
		}
		if len(vols) == 0 {
			if _, err := os.Stat(plain + ".0"); err == nil {
				t.Fatal("no xz volumes written")
			}
		}
		views := [][]string{faithfulFlags}
		if filepath.Base(a) == "bozo-20170904" {
			views = append(views, []string{"-a"}, []string{"-m", "-S", "+20h", "-T", "+20h10m"})
		}
		for _, v := range views {
			if d := sameDump(dumpOf(t, plain, v...), dumpOf(t, xz, v...), plain, xz); d != "" {
				t.Errorf("pmdumplog %v differs between the plain and the xz copy: %s", v, d)
			}
		}
		want := map[string]bool{}
		for _, f := range checkFindings(plain) {
			want[f] = true
		}
		for _, f := range checkFindings(xz) {
			if !want[f] {
				t.Errorf("pmlogcheck reports %q on the xz copy only", f)
			}
		}
	})
}
