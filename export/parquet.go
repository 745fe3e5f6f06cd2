// Package export turns PCP archives into formats other tools analyse:
// Parquet (one long table per archive, or a Hive-partitioned dataset of
// many) and OpenMetrics text. docs/export.md describes the schema and the
// name mapping.
package export

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// Row is one row of the long table: one value of one instance of one
// metric at one time. Value holds every number; ValueInt holds an
// integer too only when a double cannot hold it exactly (beyond 2^53),
// ValueText a U64 beyond int64 as decimal text, and strings, aggregates
// (hex) and event arrays as pcpcat --csv prints them (docs/export.md).
type Row struct {
	Time      int64    `parquet:"time,timestamp(nanosecond:local),delta"`
	Metric    string   `parquet:"metric,dict"`
	Instance  *string  `parquet:"instance,optional,dict"`
	Value     *float64 `parquet:"value,optional"`
	ValueInt  *int64   `parquet:"value_int,optional"`
	ValueText *string  `parquet:"value_text,optional,dict"`
}

// RowGroupRows is the number of rows in a row group: about 1M rows, a
// few tens of MB before compression, what Spark, Trino and DuckDB read
// well in parallel.
const RowGroupRows = 1 << 20

// maxExact is the largest integer below which every integer is a double.
const maxExact = 1 << 53

// batch is how many rows go to the writer at a time.
const batch = 8192

// Parquet writes the archive a as one long table to the file out: the
// file appears whole, or not at all (it is written beside out under a
// temporary name and renamed into place on success).
func Parquet(out string, a *format.Archive, opts dump.Options, extra ...[2]string) (rows int64, err error) {
	dir := filepath.Dir(out)
	f, err := os.CreateTemp(dir, "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return 0, err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	// The mode of the archives format writes.
	if err = f.Chmod(0o644); err != nil {
		return 0, err
	}
	meta, err := a.Meta()
	if err != nil {
		return 0, err
	}
	kv, err := fileMetadata(meta)
	if err != nil {
		return 0, err
	}
	wopts := []parquet.WriterOption{
		parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault}),
		parquet.MaxRowsPerRowGroup(RowGroupRows),
		parquet.CreatedBy("pcpexport", "", ""),
		parquet.KeyValueMetadata("pcp.time", "time is UTC, in nanoseconds since the epoch (stored without isAdjustedToUTC so that DuckDB keeps nanoseconds)"),
	}
	for _, p := range append(kv, extra...) {
		wopts = append(wopts, parquet.KeyValueMetadata(p[0], p[1]))
	}
	w := parquet.NewGenericWriter[Row](f, wopts...)
	rows, err = writeRows(w, a, opts)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", a.Base(), err)
	}
	if err = w.Close(); err != nil {
		return 0, fmt.Errorf("%s: %w", out, err)
	}
	if err = f.Sync(); err != nil {
		return 0, fmt.Errorf("%s: %w", out, err)
	}
	if err = f.Close(); err != nil {
		return 0, fmt.Errorf("%s: %w", out, err)
	}
	if err = os.Rename(tmp, out); err != nil {
		return 0, err
	}
	return rows, nil
}

// writeRows converts the samples in batches: the pointers of optional
// columns point into per-batch arrays, so a row costs no allocation.
func writeRows(w *parquet.GenericWriter[Row], a *format.Archive, opts dump.Options) (int64, error) {
	var (
		buf   = make([]Row, 0, batch)
		fl    = make([]float64, batch)
		in    = make([]int64, batch)
		insts = make([]string, batch)
		texts = make([]string, batch)
		total int64
	)
	flush := func() error {
		n, err := w.Write(buf)
		total += int64(n)
		buf = buf[:0]
		return err
	}
	err := dump.Samples(a, opts, func(s *dump.Sample) error {
		i := len(buf)
		r := Row{Time: s.Time.Sec*1e9 + int64(s.Time.Nsec), Metric: utf8Text(s.Metric)}
		if s.HasInstance {
			insts[i] = utf8Text(s.Instance)
			r.Instance = &insts[i]
		}
		switch s.Kind {
		case dump.SampleInt:
			fl[i] = float64(s.Int)
			r.Value = &fl[i]
			if s.Int > maxExact || s.Int < -maxExact {
				in[i] = s.Int
				r.ValueInt = &in[i]
			}
		case dump.SampleUint:
			fl[i] = float64(s.Uint)
			r.Value = &fl[i]
			switch {
			case s.Uint > math.MaxInt64:
				texts[i] = strconv.FormatUint(s.Uint, 10)
				r.ValueText = &texts[i]
			case s.Uint > maxExact:
				in[i] = int64(s.Uint)
				r.ValueInt = &in[i]
			}
		case dump.SampleFloat:
			fl[i] = s.Float
			r.Value = &fl[i]
		default:
			texts[i] = utf8Text(s.Text)
			r.ValueText = &texts[i]
		}
		buf = append(buf, r)
		if len(buf) == batch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return total, err
	}
	return total, flush()
}

// MetricMeta describes one metric in the file's "pcp.metrics" metadata.
type MetricMeta struct {
	Name      string   `json:"name"`
	Names     []string `json:"names,omitempty"`
	PMID      string   `json:"pmid"`
	Type      string   `json:"type"`
	Semantics string   `json:"semantics"`
	Units     string   `json:"units"`
	InDom     string   `json:"indom,omitempty"`
	OneLine   string   `json:"oneline,omitempty"`
	Help      string   `json:"help,omitempty"`
}

// fileMetadata is the key-value metadata of the file: the archive's
// label and its metrics' descriptors and help text.
func fileMetadata(m *format.Metadata) ([][2]string, error) {
	help := map[uint32][2]string{}
	for _, t := range m.Texts {
		if t.Type&stream.TextPMID == 0 {
			continue
		}
		h := help[t.Ident]
		if t.Type&stream.TextOneline != 0 {
			h[0] = t.Text
		} else {
			h[1] = t.Text
		}
		help[t.Ident] = h
	}
	ms := make([]MetricMeta, 0, len(m.Descs))
	for _, d := range m.Descs {
		mm := MetricMeta{
			Names: d.Names, PMID: pmidString(d.PMID), Type: d.Type.String(),
			Semantics: d.Sem.String(), Units: d.Units.String(),
		}
		mm.Name = mm.PMID
		if len(d.Names) > 0 {
			mm.Name = d.Names[0]
		}
		if d.InDom != stream.InDomNull {
			mm.InDom = indomString(d.InDom)
		}
		h := help[uint32(d.PMID)]
		mm.OneLine, mm.Help = h[0], h[1]
		ms = append(ms, mm)
	}
	js, err := json.Marshal(ms)
	if err != nil {
		return nil, err
	}
	l := m.Label
	return [][2]string{
		{"pcp.hostname", l.Hostname},
		{"pcp.timezone", l.Timezone},
		{"pcp.zoneinfo", l.Zoneinfo},
		{"pcp.metrics", string(js)},
	}, nil
}

func pmidString(p stream.PMID) string {
	u := uint32(p)
	return fmt.Sprintf("%d.%d.%d", u>>22&0x1ff, u>>10&0xfff, u&0x3ff)
}

func indomString(id stream.InDomID) string {
	u := uint32(id)
	return fmt.Sprintf("%d.%d", u>>22&0x1ff, u&0x3fffff)
}

// utf8Text makes s valid UTF-8, as Parquet's STRING columns must be
// (DuckDB refuses the file otherwise): each run of bytes that is not
// UTF-8 becomes U+FFFD.
func utf8Text(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
