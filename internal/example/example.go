// Package example generates the small, deterministic archive the project
// ships in testdata/example and uses in its README demo: a few metrics of
// every common type, instance domains that change, help text, labels, a
// <mark> where the "logger" restarted, and two volumes.
package example

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// Start is the time of the first record: 2026-11-01 00:00:00 UTC.
const Start = 1793491200

var (
	loadPMID   = stream.NewPMID(60, 2, 0)
	cpuPMID    = stream.NewPMID(60, 0, 20)
	readPMID   = stream.NewPMID(60, 0, 4)
	freePMID   = stream.NewPMID(60, 1, 2)
	ncpuPMID   = stream.NewPMID(60, 0, 32)
	relPMID    = stream.NewPMID(60, 12, 0)
	tempPMID   = stream.NewPMID(60, 34, 1)
	loadInDom  = stream.NewInDomID(60, 2)
	diskInDom  = stream.NewInDomID(60, 1)
	kbyte      = stream.NewUnits(1, 0, 0, 1, 0, 0)
	msec       = stream.NewUnits(0, 1, 0, 0, 2, 0)
	countUnits = stream.NewUnits(0, 0, 1, 0, 0, 0)
)

func labelJSON(kv ...string) stream.OneLabelSet {
	var b strings.Builder
	var ents []stream.LabelEntry
	b.WriteByte('{')
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		name := b.Len()
		b.WriteString(kv[i])
		b.WriteString(`":`)
		val := b.Len()
		b.WriteString(kv[i+1])
		ents = append(ents, stream.LabelEntry{Name: uint16(name), NameLen: uint8(len(kv[i])), Value: uint16(val), ValueLen: uint16(len(kv[i+1]))})
	}
	b.WriteByte('}')
	return stream.OneLabelSet{Inst: stream.InstNull, JSON: b.String(), NLabels: int32(len(ents)), Labels: ents}
}

// Records returns the example archive as a stream of records.
func Records() ([]stream.Record, error) {
	ts := func(i int) stream.Timestamp {
		return stream.Timestamp{Sec: Start + int64(i)*10, Nsec: int32(i%7) * 1000}
	}
	var recs []stream.Record
	add := func(r stream.Record) { recs = append(recs, r) }
	add(&stream.Label{Version: 2, PID: 4242, Start: ts(0), Hostname: "demo.example.com", Timezone: "AEST-10"})

	t0 := ts(0)
	ctx := labelJSON("hostname", `"demo.example.com"`, "environment", `"demo"`)
	ctx.Labels[0].Flags = uint8(stream.LabelContext)
	ctx.Labels[1].Flags = uint8(stream.LabelContext)
	add(&stream.LabelSet{T: t0, V2: true, Type: stream.LabelContext, Ident: uint32(stream.PMIDNull), Sets: []stream.OneLabelSet{ctx}})
	descs := []*stream.Desc{
		{PMID: loadPMID, Type: stream.TypeFloat, InDom: loadInDom, Sem: stream.SemInstant, Names: []string{"kernel.all.load"}},
		{PMID: cpuPMID, Type: stream.TypeU64, InDom: stream.InDomNull, Sem: stream.SemCounter, Units: msec, Names: []string{"kernel.all.cpu.user"}},
		{PMID: readPMID, Type: stream.TypeU32, InDom: diskInDom, Sem: stream.SemCounter, Units: countUnits, Names: []string{"disk.dev.read"}},
		{PMID: freePMID, Type: stream.Type64, InDom: stream.InDomNull, Sem: stream.SemInstant, Units: kbyte, Names: []string{"mem.util.free"}},
		{PMID: ncpuPMID, Type: stream.TypeU32, InDom: stream.InDomNull, Sem: stream.SemDiscrete, Units: countUnits, Names: []string{"hinv.ncpu"}},
		{PMID: relPMID, Type: stream.TypeString, InDom: stream.InDomNull, Sem: stream.SemDiscrete, Names: []string{"kernel.uname.release"}},
		{PMID: tempPMID, Type: stream.TypeDouble, InDom: stream.InDomNull, Sem: stream.SemInstant, Names: []string{"demo.temperature", "demo.alias.temperature"}},
	}
	for _, d := range descs {
		d.T = t0
		add(d)
	}
	add(&stream.Text{T: t0, Type: stream.TextOneline | stream.TextPMID, Ident: uint32(loadPMID), Text: "1, 5 and 15 minute load average"})
	add(&stream.Text{T: t0, Type: stream.TextHelp | stream.TextPMID, Ident: uint32(loadPMID), Text: "The run queue length averaged over 1, 5 and 15 minutes,\nas the kernel computes it."})
	add(&stream.Text{T: t0, Type: stream.TextOneline | stream.TextInDom, Ident: uint32(diskInDom), Text: "set of all disks"})
	dom := labelJSON("agent", `"linux"`)
	dom.Labels[0].Flags = uint8(stream.LabelDomain)
	add(&stream.LabelSet{T: t0, V2: true, Type: stream.LabelDomain, Ident: 60, Sets: []stream.OneLabelSet{dom}})
	add(&stream.InDom{T: t0, InDom: loadInDom, Encoding: stream.InDomV2, Insts: []int32{1, 5, 15}, Names: []string{"1 minute", "5 minute", "15 minute"}})
	add(&stream.InDom{T: t0, InDom: diskInDom, Encoding: stream.InDomV2, Insts: []int32{0, 1}, Names: []string{"sda", "sdb"}})

	var b stream.ResultBuilder
	var cpu uint64 = 1_000_000
	var reads = [3]uint32{4_294_960_000, 1000, 0}
	for i := 0; i < 60; i++ {
		t := ts(i)
		if i == 30 {
			// The "logger" restarted: a gap, and a new disk appeared.
			add(&stream.Mark{T: ts(29).Add(1e6)})
		}
		if i == 31 {
			add(&stream.InDom{T: t, InDom: diskInDom, Encoding: stream.InDomV2, Insts: []int32{0, 1, 2}, Names: []string{"sda", "sdb", "nvme0n1"}})
		}
		b.Reset()
		x := float64(i)
		b.Add(loadPMID, stream.TypeFloat,
			stream.Val{Inst: 1, F: 0.5 + 0.4*math.Sin(x/5)},
			stream.Val{Inst: 5, F: 0.5 + 0.2*math.Sin(x/15)},
			stream.Val{Inst: 15, F: 0.5 + 0.1*math.Sin(x/30)})
		cpu += uint64(2000 + 150*(i%5))
		b.Add(cpuPMID, stream.TypeU64, stream.Val{Inst: stream.InstNull, U: cpu})
		disks := []stream.Val{{Inst: 0, U: uint64(reads[0])}, {Inst: 1, U: uint64(reads[1])}}
		if i >= 31 {
			disks = append(disks, stream.Val{Inst: 2, U: uint64(reads[2])})
		}
		b.Add(readPMID, stream.TypeU32, disks...)
		reads[0] += 1500 // wraps past 2^32 on purpose: a counter wrap
		reads[1] += uint32(10 + i%3)
		reads[2] += 300
		b.Add(freePMID, stream.Type64, stream.Val{Inst: stream.InstNull, I: 8_000_000 - int64(i)*1024})
		if i == 0 || i == 31 {
			b.Add(ncpuPMID, stream.TypeU32, stream.Val{Inst: stream.InstNull, U: 8})
			b.Add(relPMID, stream.TypeString, stream.Val{Inst: stream.InstNull, S: "6.12.0-demo"})
		}
		b.Add(tempPMID, stream.TypeDouble, stream.Val{Inst: stream.InstNull, F: 41.5 + x/8})
		r := &stream.Result{}
		if err := b.Build(t, r); err != nil {
			return nil, err
		}
		add(r)
	}
	return recs, nil
}

// Write writes the example archive at base, in version 2, with two volumes.
func Write(base string, overwrite bool) error {
	recs, err := Records()
	if err != nil {
		return err
	}
	return WriteRecords(base, recs, format.WriterOptions{Version: 2, VolumeRecords: 40, Overwrite: overwrite})
}

// WriteRecords writes records as an archive at base (tests write the
// example with a change of their own this way).
func WriteRecords(base string, recs []stream.Record, opts format.WriterOptions) error {
	w, err := format.Create(base, opts)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			w.Abort()
			return fmt.Errorf("writing %s: %w", base, err)
		}
	}
	return w.Close()
}

// WriteHalves writes the example's records as two archives of host,
// dir/host/first and dir/host/second, one per half of its data, each with
// all the metadata (a host's archives, for folio tests), and returns their
// base names.
func WriteHalves(dir, host string) ([]string, error) {
	return writeSplit(dir, host, []string{"first", "second"}, true)
}

// WriteParts writes the example's records as n archives of host,
// dir/host/part0, part1, ..., one per n-th of its data, each with the
// metadata up to its end (the last with all of it), so that they do not
// overlap in time, and returns their base names.
func WriteParts(dir, host string, n int) ([]string, error) {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("part%d", i)
	}
	return writeSplit(dir, host, names, false)
}

// writeSplit writes one archive per name, each with its share of the data
// and all the metadata (allMeta) or the metadata up to its end.
func writeSplit(dir, host string, names []string, allMeta bool) ([]string, error) {
	recs, err := Records()
	if err != nil {
		return nil, err
	}
	var meta, data []stream.Record
	var label stream.Label
	for _, r := range recs {
		switch r := r.(type) {
		case *stream.Label:
			if r.Vol <= 0 {
				label = *r
			}
		case *stream.Result, *stream.Mark:
			data = append(data, r)
		default:
			meta = append(meta, r)
		}
	}
	label.Hostname = host
	n := len(names)
	var bases []string
	for i, name := range names {
		part := data[i*len(data)/n : (i+1)*len(data)/n]
		base := filepath.Join(dir, host, name)
		if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
			return nil, err
		}
		l := label
		l.Start = part[0].Time()
		out := []stream.Record{&l}
		end := part[len(part)-1].Time()
		for _, m := range meta {
			if allMeta || i == n-1 || !m.Time().After(end) {
				out = append(out, m)
			}
		}
		out = append(out, part...)
		if err := WriteRecords(base, out, format.WriterOptions{}); err != nil {
			return nil, err
		}
		bases = append(bases, base)
	}
	return bases, nil
}
