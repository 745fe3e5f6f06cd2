package mmv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// TestParseLabels: label text is compacted, nested objects flattened into
// dotted names flagged compound, bad names left out, duplicate names and
// non-objects refused; merged sets are rebuilt in name order.
func TestParseLabels(t *testing.T) {
	inst := uint8(stream.LabelInstances)
	for _, c := range []struct {
		in    string
		flags uint8
		want  string // "" for an error
		flag0 uint8  // the first label's flags
	}{
		{`{"a": 1}`, inst, `{"a":1}`, inst},
		{`{ "map" : {"b":[1, 2], "a":1} }`, inst, `{"map.a":1,"map.b":[1,2]}`, inst | stream.LabelCompound},
		{`{"bad-name":1,"ok":"x y"}`, inst, `{"ok":"x y"}`, inst},
		{`{"a.b":1}`, inst, `{}`, 0},
		{`{"a.b":1}`, stream.LabelCompound, `{"a.b":1}`, stream.LabelCompound},
		{`{"s":"a\"b","n":null}`, inst, `{"n":null,"s":"a\"b"}`, inst},
		{`{"a":1,"a":2}`, inst, "", 0},
		{`[1]`, inst, "", 0},
		{`{"a":1} x`, inst, "", 0},
		{`{"a":`, inst, "", 0},
	} {
		s, err := parseLabels(c.in, c.flags)
		if c.want == "" {
			if err == nil {
				t.Errorf("%s: no error", c.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		m := merge(labset{}, s)
		if m.json != c.want {
			t.Errorf("%s: %s, want %s", c.in, m.json, c.want)
		}
		checkOffsets(t, m.one(stream.InstNull, 0))
		if len(m.labs) > 0 && m.labs[0].flags != c.flag0 {
			t.Errorf("%s: flags %#x, want %#x", c.in, m.labs[0].flags, c.flag0)
		}
	}
	a, _ := parseLabels(`{"b":1,"a":2}`, 0)
	b, _ := parseLabels(`{"a":3,"c":4}`, 0)
	if m := merge(a, b); m.json != `{"a":3,"b":1,"c":4}` {
		t.Errorf("merge: %s", m.json)
	}
}

// checkOffsets: each label's name and value offsets point at its name and
// value in the set's text.
func checkOffsets(t *testing.T, s stream.OneLabelSet) {
	t.Helper()
	if int(s.NLabels) != len(s.Labels) {
		t.Errorf("%s: nlabels %d, %d labels", s.JSON, s.NLabels, len(s.Labels))
	}
	for _, e := range s.Labels {
		name, val := s.JSON[e.Name:int(e.Name)+int(e.NameLen)], s.JSON[e.Value:int(e.Value)+int(e.ValueLen)]
		if !strings.Contains(s.JSON, `"`+name+`":`+val) {
			t.Errorf("%s: label %q:%q misplaced", s.JSON, name, val)
		}
	}
}

// TestContextLabels: pmcd's set, with the labels directories' files.
func TestContextLabels(t *testing.T) {
	conf := t.TempDir()
	for name, text := range map[string]string{"labels/env": `{"env":"ci"}`, "labels/optional/rack": `{"rack":{"row":3}}`,
		"labels/.hidden": `{"no":1}`} {
		os.MkdirAll(filepath.Join(conf, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(conf, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PCP_SYSCONF_DIR", conf)
	s := ContextLabels()
	checkOffsets(t, s)
	host, _ := os.Hostname()
	if !strings.HasPrefix(s.JSON, `{"domainname":"`) || !strings.Contains(s.JSON, `"env":"ci","hostname":"`+host+`","machineid":"`) ||
		!strings.HasSuffix(s.JSON, `","rack.row":3}`) {
		t.Errorf("context labels %s", s.JSON)
	}
	ctx := uint8(stream.LabelContext)
	want := []uint8{ctx, ctx | stream.LabelCompound, ctx, ctx, ctx | stream.LabelCompound | stream.LabelOptional}
	for i, e := range s.Labels {
		if i < len(want) && e.Flags != want[i] {
			t.Errorf("label %d flags %#x, want %#x", i, e.Flags, want[i])
		}
	}
	if err := os.WriteFile(filepath.Join(conf, "labels.conf"), []byte("[global]\nmachineid_hash = sha256\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := ContextLabels(); !strings.Contains(s.JSON, `"machineid_sha256":"`) {
		t.Errorf("with machineid_hash = sha256: %s", s.JSON)
	}
}

// TestSamplerLabels: the domain set once, a file's item labels with the
// metric, an instances set per instance domain (empty sets included), and
// nothing again while nothing changes.
func TestSamplerLabels(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), build(spec{version: 3, nm: 3, ni: 2, gen: 1, cluster: 5, labels: true}), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Sampler{Path: dir}
	var c collector
	for i := 0; i < 2; i++ {
		if err := s.Sample(time.Unix(int64(100+i), 0), c.emit); err != nil {
			t.Fatal(err)
		}
	}
	got := map[[2]uint32][]stream.OneLabelSet{}
	for _, r := range c.recs {
		if ls, ok := r.(*stream.LabelSet); ok {
			k := [2]uint32{ls.Type, ls.Ident}
			if got[k] != nil {
				t.Errorf("label set %#x %#x written twice", ls.Type, ls.Ident)
			}
			got[k] = ls.Sets
			for _, one := range ls.Sets {
				checkOffsets(t, one)
			}
		}
	}
	if d := got[[2]uint32{stream.LabelDomain, Domain}]; len(d) != 1 || d[0].JSON != `{"agent":"mmv"}` {
		t.Errorf("domain labels %+v", d)
	}
	if it := got[[2]uint32{stream.LabelItem, uint32(stream.NewPMID(Domain, 5, 1))}]; len(it) != 1 || it[0].JSON != `{"m":1}` ||
		it[0].Labels[0].Flags != uint8(stream.LabelItem) {
		t.Errorf("item labels %+v", it)
	}
	var insts int
	for k, sets := range got {
		if k[0] == stream.LabelInstances {
			insts++
			for _, one := range sets {
				if one.JSON != "" || one.NLabels != 0 {
					t.Errorf("instance labels %+v", one)
				}
			}
		}
	}
	if insts == 0 {
		t.Errorf("no instances label sets")
	}
}
