package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/example"
	"github.com/pcptools/pcptools/stream"
)

// TestExtraUnits72Survive: PCP 7.2 gave the last byte of pmUnits (PCP
// 6.0.3's padding) to extra units: temperature, voltage, current, power.
// An archive whose metric is in degrees Celsius goes through every tool
// that writes an archive with that byte as it was, and our dump prints it
// as PCP 7.2's pmUnitsStr does; PCP 6.0.3 reads the archive (it ignores
// the byte).
func TestExtraUnits72Survive(t *testing.T) {
	needPCP(t)
	dir := t.TempDir()
	const celsius = stream.Units(1<<3 | 1) // PM_UNIT_TEMPERATURE, PM_TEMPERATURE_C
	recs, err := example.Records()
	if err != nil {
		t.Fatal(err)
	}
	var temp stream.PMID
	for _, r := range recs {
		if d, ok := r.(*stream.Desc); ok && d.Names[0] == "demo.temperature" {
			d.Units, temp = celsius, d.PMID
		}
	}
	in := filepath.Join(dir, "in")
	if err := example.WriteRecords(in, recs, format.WriterOptions{Version: 2}); err != nil {
		t.Fatal(err)
	}
	if r := run(slow, nil, "pmlogcheck", in); r.code != 0 {
		t.Fatalf("pmlogcheck: %s%s", r.stdout, r.stderr)
	}
	conf := filepath.Join(dir, "units.conf")
	if err := os.WriteFile(conf, []byte("metric demo.temperature { units -> 0,0,1,0,0,ONE }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want stream.Units
	}{
		{"pcpcat", []string{in, "-o"}, celsius},
		{"pcpextract", []string{in, "-o"}, celsius},
		{"pcprewrite", []string{"-r", "/dev/null", in, "-o"}, celsius},
		// A units clause sets PCP 6.0.3's six fields; the extra unit stays.
		{"pcprewrite", []string{"-c", conf, in, "-o"}, stream.NewUnits(0, 0, 1, 0, 0, 0) | celsius},
		{"pcpreduce", []string{"-t", "60", in, "-o"}, celsius},
	} {
		out := filepath.Join(t.TempDir(), "out")
		if r := run(slow, nil, ours(c.name), append(c.args, out)...); r.code != 0 {
			t.Fatalf("%s %v: %s", c.name, c.args, r.stderr)
		}
		a, err := format.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		m, err := a.Meta()
		if err != nil {
			t.Fatal(err)
		}
		d := m.ByPMID[temp]
		if d == nil || d.Units != c.want {
			t.Errorf("%s %v: demo.temperature's units %#08x, want %#08x", c.name, c.args, d.Units, c.want)
		}
	}
	r := run(slow, nil, ours("pcpcat"), "-d", in)
	if !strings.Contains(r.stdout, "Units: temperature (C)") {
		t.Errorf("pcpcat -d does not print PCP 7.2's units:\n%s", r.stdout)
	}
}
