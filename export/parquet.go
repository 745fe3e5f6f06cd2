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
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unicode/utf8"
	"unsafe"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
	pqformat "github.com/parquet-go/parquet-go/format"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/scratch"
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

// Parquet writes the archive or stream a as one long table to the file out: the
// file appears whole, or not at all (it is written beside out under a
// temporary name and renamed into place on success).
func Parquet(out string, a *Source, opts dump.Options, extra ...[2]string) (rows int64, err error) {
	return writeParquet(out, a, opts, encoders, false, extra)
}

// ParquetRates is Parquet with counters as rates: the value of a counter
// metric is its rate per second since the series' last value (NULL for
// the first, after a <mark> and where the counter went down), and the
// file's "pcp.rates" metadata says so.
func ParquetRates(out string, a *Source, opts dump.Options, extra ...[2]string) (rows int64, err error) {
	return writeParquet(out, a, opts, encoders, true, extra)
}

// writeParquet is Parquet with n encoders (0: one per core), counters as
// rates or not.
func writeParquet(out string, a *Source, opts dump.Options, n int, rates bool, extra [][2]string) (rows int64, err error) {
	f, err := scratch.CreateOutput(out, "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			f.Abort()
		}
	}()
	meta := a.meta
	kv, err := fileMetadata(meta)
	if err != nil {
		return 0, err
	}
	wopts := []parquet.WriterOption{
		parquet.Compression(&pageCodec{}),
		parquet.MaxRowsPerRowGroup(RowGroupRows),
		parquet.CreatedBy("pcpexport", "", ""),
		// No minimum and maximum for the string columns: rows are in
		// time order, so every row group spans nearly every metric and
		// instance name and no engine could skip one on them, and
		// comparing the strings of every page was a tenth of the
		// encoding's CPU time.
		parquet.SkipPageBounds("metric"),
		parquet.SkipPageBounds("instance"),
		parquet.SkipPageBounds("value_text"),
		parquet.KeyValueMetadata("pcp.time", "time is UTC, in nanoseconds since the epoch (stored without isAdjustedToUTC so that DuckDB keeps nanoseconds)"),
	}
	var rt *rater
	if rates {
		rt = newRater(meta)
		extra = append(extra, [2]string{"pcp.rates", ratesNote})
		onRecord := opts.OnRecord
		opts.OnRecord = func(rec stream.Record) {
			if _, ok := rec.(*stream.Mark); ok {
				rt.mark()
			}
			if onRecord != nil {
				onRecord(rec)
			}
		}
	}
	for _, p := range append(kv, extra...) {
		wopts = append(wopts, parquet.KeyValueMetadata(p[0], p[1]))
	}
	w := parquet.NewGenericWriter[Row](f, wopts...)
	rows, err = writeRowGroups(w, a, opts, wopts[:6], n, rt)
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return 0, fmt.Errorf("%s: disk full, nothing written: %w", out, err)
	}
	if err != nil {
		if a.name == "" {
			return 0, err
		}
		return 0, fmt.Errorf("%s: %w", a.name, err)
	}
	if err = w.Close(); err != nil {
		return 0, fmt.Errorf("%s: %w", out, err)
	}
	if err = f.Commit(true); err != nil {
		return 0, fmt.Errorf("%s: %w", out, err)
	}
	return rows, nil
}

// rowBatch is a batch of rows on its way to a row group's encoder, in
// columns of their own (about 50 bytes a row, against 104 as Rows with
// their pointers' targets): a whole row group's worth of batches is let
// in flight (see writeRowGroups), so that the next encoder has work while
// the decoder fills the current one's group. The rare 64-bit integers and
// texts are kept apart, with the row they belong to.
type rowBatch struct {
	time   []int64
	metric []string
	inst   []string
	flags  []uint8
	value  []float64
	ints   []intCell
	texts  []textCell
	end    bool // the last batch of its row group
}

// flags of a row in a rowBatch
const (
	hasInst  = 1 << iota
	hasValue // value holds the number
	hasInt   // ints has the exact integer
	hasText  // texts has the text
)

type intCell struct {
	row int
	v   int64
}

type textCell struct {
	row int
	s   string
}

func newRowBatch() *rowBatch {
	return &rowBatch{time: make([]int64, 0, batch), metric: make([]string, 0, batch), inst: make([]string, 0, batch),
		flags: make([]uint8, 0, batch), value: make([]float64, 0, batch)}
}

func (b *rowBatch) len() int { return len(b.time) }

func (b *rowBatch) reset() {
	clear(b.metric)
	clear(b.inst)
	clear(b.texts)
	b.time, b.metric, b.inst, b.flags, b.value = b.time[:0], b.metric[:0], b.inst[:0], b.flags[:0], b.value[:0]
	b.ints, b.texts, b.end = b.ints[:0], b.texts[:0], false
}

// add appends the row of s, its strings as they are (see rows).
func (b *rowBatch) add(s *dump.Sample) {
	i := len(b.time)
	var fl uint8
	var v float64
	b.time = append(b.time, s.Time.Sec*1e9+int64(s.Time.Nsec))
	b.metric = append(b.metric, s.Metric)
	inst := ""
	if s.HasInstance {
		fl, inst = hasInst, s.Instance
	}
	b.inst = append(b.inst, inst)
	switch s.Kind {
	case dump.SampleInt:
		fl |= hasValue
		v = float64(s.Int)
		if s.Int > maxExact || s.Int < -maxExact {
			fl |= hasInt
			b.ints = append(b.ints, intCell{i, s.Int})
		}
	case dump.SampleUint:
		fl |= hasValue
		v = float64(s.Uint)
		switch {
		case s.Uint > math.MaxInt64:
			fl |= hasText
			b.texts = append(b.texts, textCell{i, strconv.FormatUint(s.Uint, 10)})
		case s.Uint > maxExact:
			fl |= hasInt
			b.ints = append(b.ints, intCell{i, int64(s.Uint)})
		}
	case dump.SampleFloat:
		fl |= hasValue
		v = s.Float
	default:
		fl |= hasText
		b.texts = append(b.texts, textCell{i, s.Text})
	}
	b.flags = append(b.flags, fl)
	b.value = append(b.value, v)
}

// rows makes b's rows into out, whose pointers point into b, with their
// strings made valid UTF-8 (utf8Text): on the encoder's goroutine rather
// than the decoder's. A metric's name comes row after row, the same
// string each time: it is checked once.
func (b *rowBatch) rows(out []Row) []Row {
	out = out[:0]
	var last, fixed string
	ints, texts := b.ints, b.texts
	for i, t := range b.time {
		r := Row{Time: t}
		if m := b.metric[i]; i == 0 || len(m) != len(last) || unsafe.StringData(m) != unsafe.StringData(last) {
			last, fixed = m, utf8Text(m)
		}
		r.Metric = fixed
		fl := b.flags[i]
		if fl&hasInst != 0 {
			b.inst[i] = utf8Text(b.inst[i])
			r.Instance = &b.inst[i]
		}
		if fl&hasValue != 0 {
			r.Value = &b.value[i]
		}
		if fl&hasInt != 0 {
			r.ValueInt = &ints[0].v
			ints = ints[1:]
		}
		if fl&hasText != 0 {
			texts[0].s = utf8Text(texts[0].s)
			r.ValueText = &texts[0].s
			texts = texts[1:]
		}
		out = append(out, r)
	}
	return out
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
// same schema, encodings and codec verbatim). Encoding takes about five
// times the CPU time of the decoding.
//
// The rows of a group reach its worker in order, all of them before any
// of the next group's: for the next worker to be busy while the decoder
// fills the current one's group, the batches in flight must hold about a
// row group (one for each worker beyond the first, up to two). With a
// few batches only, one worker at a time was busy: 14.5 s for the bench
// archive against 8.9-9.4 s with a group in flight (docs/export.md).
func writeRowGroups(w *parquet.GenericWriter[Row], a *Source, opts dump.Options, wopts []parquet.WriterOption, n int, rt *rater) (int64, error) {
	if n <= 0 {
		n = max(runtime.GOMAXPROCS(0), 1)
	}
	inFlight := 4*n + min(n-1, 2)*((rowGroupRows+batch-1)/batch)
	var (
		made    = 0
		free    = make(chan *rowBatch, inFlight)
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
	// take returns a free batch, made while fewer than inFlight exist.
	take := func() *rowBatch {
		select {
		case b := <-free:
			return b
		default:
		}
		if made < inFlight {
			made++
			return newRowBatch()
		}
		return <-free
	}
	for i := range ins {
		ins[i] = make(chan *rowBatch, inFlight)
		wg.Add(1)
		go func(in <-chan *rowBatch, k int) {
			defer wg.Done()
			var gw *parquet.GenericWriter[Row]
			var buf *chunkBuf
			var rows []Row
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
					rows = b.rows(rows)
					_, err = gw.Write(rows)
					clear(rows) // no pointer into b once it is free
				}
				end := b.end
				b.reset()
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
	cur := take()
	send := func(end bool) {
		cur.end = end
		ins[k%n] <- cur
		cur = take()
		if end {
			k++
			inGroup = 0
		}
	}
	err := a.samples(opts, func(s *dump.Sample) error {
		if failed.Load() {
			return errEncoding
		}
		if rt != nil && rt.counter[s.PMID] {
			v, ok := rt.rate(s)
			cur.addRate(s, v, ok)
		} else {
			cur.add(s)
		}
		inGroup++
		switch {
		case inGroup == rowGroupRows:
			send(true)
		case cur.len() == batch:
			send(false)
		}
		return nil
	})
	if inGroup > 0 || cur.len() > 0 {
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
	labels, err := labelMetadata(m)
	if err != nil {
		return nil, err
	}
	l := m.Label
	return [][2]string{
		{"pcp.hostname", l.Hostname},
		{"pcp.timezone", l.Timezone},
		{"pcp.zoneinfo", l.Zoneinfo},
		{"pcp.metrics", string(js)},
		{"pcp.labels", labels},
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
