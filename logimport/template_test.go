package logimport

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/pcptools/pcptools/stream"
)

// recorder keeps a copy of every record written to it.
type recorder struct{ recs []string }

func (r *recorder) Write(rec stream.Record) error {
	if res, ok := rec.(*stream.Result); ok {
		r.recs = append(r.recs, fmt.Sprintf("result %v v%d %x", res.T, res.Version, bytes.Clone(res.Body)))
		return nil
	}
	r.recs = append(r.recs, fmt.Sprintf("%T %+v", rec, rec))
	return nil
}

// TestTemplateLikeBuilder: records made from templates are the records
// the builder makes, byte for byte, over random sequences of puts that
// mostly repeat the last record's shape and sometimes change it (a
// metric left out, an instance more, a value that does not parse, a new
// instance, types a template does not write), in v2 and v3 layouts.
func TestTemplateLikeBuilder(t *testing.T) {
	defer func() { noTemplates = false }()
	for _, version := range []int{2, 3} {
		for seed := uint64(1); seed <= 20; seed++ {
			var got [2][]string
			applied := 0
			for k, off := range []bool{true, false} {
				noTemplates = off
				rec := &recorder{}
				im, err := New(rec, Options{Version: version, Hostname: "h"})
				if err != nil {
					t.Fatal(err)
				}
				runTemplateScript(t, im, rand.New(rand.NewPCG(seed, uint64(version))), seed%2 == 0)
				if err := im.End(); err != nil {
					t.Fatal(err)
				}
				got[k] = rec.recs
				if !off {
					applied = im.tmpl.applied
				}
			}
			if len(got[0]) != len(got[1]) {
				t.Fatalf("v%d seed %d: %d records with templates, %d without", version, seed, len(got[1]), len(got[0]))
			}
			for i := range got[0] {
				if got[0][i] != got[1][i] {
					t.Fatalf("v%d seed %d: record %d differs:\nbuilder:  %s\ntemplate: %s", version, seed, i, got[0][i], got[1][i])
				}
			}
			if seed%2 == 1 && applied < 100 {
				t.Errorf("v%d seed %d: only %d records came from templates", version, seed, applied)
			}
		}
	}
}

// runTemplateScript puts 300 records; with anyType, FLOAT and STRING
// metrics may be among them (no template then).
func runTemplateScript(t *testing.T, im *Importer, r *rand.Rand, anyType bool) {
	t.Helper()
	types := []stream.Type{stream.Type32, stream.TypeU32, stream.Type64, stream.TypeU64, stream.TypeDouble, stream.TypeFloat, stream.TypeString}
	type col struct{ name, inst string }
	var cols []col
	nextInst := map[stream.InDomID]int32{}
	for m := 0; m < 8; m++ {
		typ := stream.TypeDouble
		if r.IntN(3) == 0 {
			typ = types[r.IntN(len(types)-2)]
		}
		if anyType && r.IntN(3) == 0 {
			typ = types[r.IntN(len(types))]
		}
		name := fmt.Sprintf("t.m%d", m)
		var id stream.InDomID = stream.InDomNull
		if r.IntN(2) == 0 {
			id = stream.NewInDomID(Domain, uint32(m))
		}
		if _, err := im.AddMetric(Metric{Name: name, Type: typ, InDom: id, Sem: stream.SemInstant}); err != nil {
			t.Fatal(err)
		}
		if id == stream.InDomNull {
			cols = append(cols, col{name, ""})
			continue
		}
		for j := 0; j < 1+r.IntN(3); j++ {
			inst := fmt.Sprintf("i%d", nextInst[id])
			if err := im.AddInstance(id, inst, nextInst[id]); err != nil {
				t.Fatal(err)
			}
			nextInst[id]++
			cols = append(cols, col{name, inst})
		}
	}
	r.Shuffle(len(cols), func(i, j int) { cols[i], cols[j] = cols[j], cols[i] })
	sec := int64(1700000000)
	for row := 0; row < 300; row++ {
		odd := r.IntN(10) == 0 // a row of another shape
		for _, c := range cols {
			if odd && r.IntN(4) == 0 {
				continue // left out
			}
			v := strconv.Itoa(r.IntN(1 << 20))
			switch typ := im.metrics[im.byName[c.name]].desc.Type; {
			case r.IntN(3) == 0 && (typ == stream.Type32 || typ == stream.Type64):
				v = "-" + v
			case r.IntN(3) == 0 && (typ == stream.TypeDouble || typ == stream.TypeFloat):
				v = "-" + v + ".25"
			}
			if odd && r.IntN(20) == 0 {
				v = "x" // does not parse (numeric metrics)
			}
			_ = im.PutValue(c.name, c.inst, v)
		}
		if r.IntN(100) == 0 {
			// a new instance of some metric with an instance domain
			for _, c := range cols {
				if c.inst == "" {
					continue
				}
				id := im.metrics[im.byName[c.name]].desc.InDom
				inst := fmt.Sprintf("i%d", nextInst[id])
				if err := im.AddInstance(id, inst, nextInst[id]); err != nil {
					t.Fatal(err)
				}
				nextInst[id]++
				cols = append(cols, col{c.name, inst})
				break
			}
		}
		sec += int64(1 + r.IntN(2))
		if err := im.Write(stream.Timestamp{Sec: sec, Nsec: int32(r.IntN(1000)) * 1000}); err != nil {
			t.Fatal(err)
		}
	}
}
