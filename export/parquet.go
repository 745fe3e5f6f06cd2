// Package export turns PCP archives into formats other tools analyse:
// Parquet (one long table per archive, or a Hive-partitioned dataset of
// many) and OpenMetrics text. docs/export.md describes the schema and the
// name mapping.
package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
	pqformat "github.com/parquet-go/parquet-go/format"

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
	Value     *float64 `parquet:"value,optional,split"`
	ValueInt  *int64   `parquet:"value_int,optional"`
	ValueText *string  `parquet:"value_text,optional,dict"`
}

// RowGroupRows is the number of rows in a row group: about 1M rows, a
// few tens of MB before compression, what Spark, Trino and DuckDB read
// well in parallel.
const RowGroupRows = 1 << 20

// rowGroupRows and encoders are RowGroupRows and the number of row
// groups encoded at once (0: one per core), variables for the tests.
var (
	rowGroupRows = RowGroupRows
	encoders     = 0
)

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
		parquet.Compression(&pageCodec{}),
		parquet.MaxRowsPerRowGroup(RowGroupRows),
		parquet.CreatedBy("pcpexport", "", ""),
		// No minimum and maximum for the instance and text columns:
		// rows are in time order, so every row group spans nearly every
		// name and no engine could skip one on them, and comparing the
		// strings of every page was a tenth of the encoding's CPU time.
		parquet.SkipPageBounds("instance"),
		parquet.SkipPageBounds("value_text"),
		parquet.KeyValueMetadata("pcp.time", "time is UTC, in nanoseconds since the epoch (stored without isAdjustedToUTC so that DuckDB keeps nanoseconds)"),
	}
	for _, p := range append(kv, extra...) {
		wopts = append(wopts, parquet.KeyValueMetadata(p[0], p[1]))
	}
	w := parquet.NewGenericWriter[Row](f, wopts...)
	rows, err = writeRowGroups(w, a, opts, wopts[:5])
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

// rowBatch is a batch of rows on its way to a row group's encoder: the
// pointers of optional columns point into its own arrays, so a row costs
// no allocation.
type rowBatch struct {
	rows  []Row
	fl    []float64
	in    []int64
	insts []string
	texts []string
	end   bool // the last batch of its row group
}

func newRowBatch() *rowBatch {
	return &rowBatch{rows: make([]Row, 0, batch), fl: make([]float64, batch), in: make([]int64, batch),
		insts: make([]string, batch), texts: make([]string, batch)}
}

// add appends the row of s, its strings as they are (see valid).
func (b *rowBatch) add(s *dump.Sample) {
	i := len(b.rows)
	r := Row{Time: s.Time.Sec*1e9 + int64(s.Time.Nsec), Metric: s.Metric}
	if s.HasInstance {
		b.insts[i] = s.Instance
		r.Instance = &b.insts[i]
	}
	switch s.Kind {
	case dump.SampleInt:
		b.fl[i] = float64(s.Int)
		r.Value = &b.fl[i]
		if s.Int > maxExact || s.Int < -maxExact {
			b.in[i] = s.Int
			r.ValueInt = &b.in[i]
		}
	case dump.SampleUint:
		b.fl[i] = float64(s.Uint)
		r.Value = &b.fl[i]
		switch {
		case s.Uint > math.MaxInt64:
			b.texts[i] = strconv.FormatUint(s.Uint, 10)
			r.ValueText = &b.texts[i]
		case s.Uint > maxExact:
			b.in[i] = int64(s.Uint)
			r.ValueInt = &b.in[i]
		}
	case dump.SampleFloat:
		b.fl[i] = s.Float
		r.Value = &b.fl[i]
	default:
		b.texts[i] = s.Text
		r.ValueText = &b.texts[i]
	}
	b.rows = append(b.rows, r)
}

// valid makes the strings of b's rows valid UTF-8 (utf8Text), on the
// encoder's goroutine rather than the decoder's. A metric's name comes
// row after row, the same string each time: it is checked once.
func (b *rowBatch) valid() {
	var last string
	for i := range b.rows {
		r := &b.rows[i]
		if m := r.Metric; i == 0 || len(m) != len(last) || unsafe.StringData(m) != unsafe.StringData(last) {
			last = m
			r.Metric = utf8Text(m)
		} else {
			r.Metric = b.rows[i-1].Metric
		}
		if r.Instance != nil {
			*r.Instance = utf8Text(*r.Instance)
		}
		if r.ValueText != nil {
			*r.ValueText = utf8Text(*r.ValueText)
		}
	}
}

// encoded is a row group encoded by a worker: a Parquet file in memory
// holding that one row group.
type encoded struct {
	k   int
	buf *chunkBuf
	err error
}

// writeRowGroups encodes the row groups in parallel, one per core: the
// caller's goroutine decodes the archive into batches of rows, row group
// k goes to worker k mod n, which encodes and compresses it into a file
// of its own in memory, and the row groups are then copied into w in
// order, compressed pages and all (parquet-go copies a row group of the
// same schema, encodings and codec verbatim). Encoding was three times
// the CPU time of the decoding (docs/export.md).
func writeRowGroups(w *parquet.GenericWriter[Row], a *format.Archive, opts dump.Options, wopts []parquet.WriterOption) (int64, error) {
	n := encoders
	if n <= 0 {
		n = max(runtime.GOMAXPROCS(0), 1)
	}
	var (
		free    = make(chan *rowBatch, 4*n)
		ins     = make([]chan *rowBatch, n)
		results = make(chan encoded, n)
		// bufs keeps the buffers of row groups already copied, for
		// reuse. Taking one never waits: a worker that did could be the
		// one whose row group the others' finished ones wait for (with
		// small row groups, a worker's queue holds several).
		bufs   = make(chan *chunkBuf, 2*n)
		wg     sync.WaitGroup
		failed atomic.Bool
	)
	for range 4 * n {
		free <- newRowBatch()
	}
	for i := range ins {
		ins[i] = make(chan *rowBatch, 4)
		wg.Add(1)
		go func(in <-chan *rowBatch, k int) {
			defer wg.Done()
			var gw *parquet.GenericWriter[Row]
			var buf *chunkBuf
			var err error
			open := false
			for b := range in {
				if err == nil && !failed.Load() {
					if !open {
						select {
						case buf = <-bufs:
						default:
							buf = new(chunkBuf)
						}
						buf.Reset()
						if gw == nil {
							gw = parquet.NewGenericWriter[Row](buf, wopts...)
						} else {
							gw.Reset(buf)
						}
						open = true
					}
					b.valid()
					_, err = gw.Write(b.rows)
				}
				end := b.end
				b.rows, b.end = b.rows[:0], false
				free <- b
				if end {
					if err == nil && open {
						err = gw.Close()
					}
					if err != nil {
						failed.Store(true)
					}
					results <- encoded{k: k, buf: buf, err: err}
					buf, err, open = nil, nil, false
					k += n
				}
			}
		}(ins[i], i)
	}
	// The assembler: row groups into w, in order.
	var total int64
	var werr error
	assembled := make(chan struct{})
	go func() {
		defer close(assembled)
		pending := map[int]encoded{}
		next := 0
		for r := range results {
			pending[r.k] = r
			for {
				e, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				if werr == nil {
					werr = e.err
				}
				if werr == nil && e.buf != nil {
					var rows int64
					rows, werr = copyRowGroups(w, e.buf)
					total += rows
				}
				if werr != nil {
					failed.Store(true)
				}
				if e.buf != nil {
					select {
					case bufs <- e.buf:
					default:
					}
				}
			}
		}
	}()
	k, inGroup := 0, 0
	cur := <-free
	send := func(end bool) {
		cur.end = end
		ins[k%n] <- cur
		cur = <-free
		if end {
			k++
			inGroup = 0
		}
	}
	err := dump.Samples(a, opts, func(s *dump.Sample) error {
		if failed.Load() {
			return errEncoding
		}
		cur.add(s)
		inGroup++
		switch {
		case inGroup == rowGroupRows:
			send(true)
		case len(cur.rows) == batch:
			send(false)
		}
		return nil
	})
	if inGroup > 0 || len(cur.rows) > 0 {
		send(true)
	}
	for _, in := range ins {
		close(in)
	}
	wg.Wait()
	close(results)
	<-assembled
	if werr != nil {
		return total, werr
	}
	return total, err
}

// errEncoding stops the decoding when an encoder or the assembler failed
// (their error is the one reported).
var errEncoding = errors.New("encoding failed")

// copyRowGroups copies the row groups of the Parquet file in buf into w.
func copyRowGroups(w *parquet.GenericWriter[Row], buf *chunkBuf) (int64, error) {
	pf, err := parquet.OpenFile(buf, buf.Len())
	if err != nil {
		return 0, err
	}
	var total int64
	for _, rg := range pf.RowGroups() {
		n, err := w.WriteRowGroup(rg)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
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

// pageCodec is zstd at its default level for Parquet pages, as
// parquet-go's own codec, with a window the size of the largest page
// (parquet.DefaultPageBufferSize, before compression) instead of 8 MiB: a
// page is compressed on its own, so nothing beyond the page could be
// referred to, and each encoder's history (one per column being
// compressed at once) was most of the memory of a parallel export.
type pageCodec struct {
	encoders sync.Pool
	dec      zstd.Codec // decoding, for readers of what is written
}

func (c *pageCodec) String() string { return c.dec.String() }

func (c *pageCodec) CompressionCodec() pqformat.CompressionCodec { return c.dec.CompressionCodec() }

func (c *pageCodec) Encode(dst, src []byte) ([]byte, error) {
	e, _ := c.encoders.Get().(*kzstd.Encoder)
	if e == nil {
		var err error
		e, err = kzstd.NewWriter(nil,
			kzstd.WithEncoderConcurrency(1),
			kzstd.WithEncoderLevel(kzstd.SpeedDefault),
			kzstd.WithWindowSize(parquet.DefaultPageBufferSize),
			kzstd.WithZeroFrames(true),
			kzstd.WithEncoderCRC(false))
		if err != nil {
			return nil, err
		}
	}
	out := e.EncodeAll(src, dst[:0])
	c.encoders.Put(e)
	return out, nil
}

func (c *pageCodec) Decode(dst, src []byte) ([]byte, error) { return c.dec.Decode(dst, src) }

// chunkBuf is a worker's in-memory file: bytes in chunks of chunkSize, so
// that a row group takes its size and less than a chunk more (a doubling
// buffer took up to twice that, for each row group in flight); kept
// chunks are reused for the next row group.
type chunkBuf struct {
	chunks [][]byte
	n      int64
}

const chunkSize = 1 << 20

func (b *chunkBuf) Reset() {
	for i := range b.chunks {
		b.chunks[i] = b.chunks[i][:0]
	}
	b.n = 0
}

func (b *chunkBuf) Len() int64 { return b.n }

func (b *chunkBuf) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := int(b.n / chunkSize)
		if i == len(b.chunks) {
			b.chunks = append(b.chunks, make([]byte, 0, chunkSize))
		}
		c := b.chunks[i]
		k := copy(c[len(c):cap(c)], p)
		b.chunks[i] = c[:len(c)+k]
		p = p[k:]
		b.n += int64(k)
	}
	return n, nil
}

func (b *chunkBuf) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("chunkBuf.ReadAt: negative offset")
	}
	n := 0
	for len(p) > 0 && off < b.n {
		c := b.chunks[off/chunkSize][off%chunkSize:]
		k := copy(p, c)
		p = p[k:]
		off += int64(k)
		n += k
	}
	if len(p) > 0 {
		return n, io.EOF
	}
	return n, nil
}
