// Package mutate makes hostile inputs for the tools: deterministic mutants
// of a PCP archive's files and of a pipe stream, each with a name that says
// what was done to it and where, so that a failure found in CI names its
// mutant and reproduces with the same seed.
//
//	archive files ──Archive(files, seed)──▶ []Mutant ──Mutant.Write(dir, base)──▶ dir/base.meta, .0, .index
//	pipe stream   ──Stream(data, seed)────▶ []Mutant ──Mutant.Data──────────────▶ a tool's standard input
//
// The generator walks the record framing (every PCP record starts and ends
// with its length word; the index is a label record followed by fixed-size
// entries; a stream is a 12-byte header followed by 20-byte frame headers
// and their payloads) and mutates at what it finds: truncation at every
// record boundary and inside each record, one bit flipped in each record,
// length words and count fields set to 0, to the bytes left and to 2^31-1,
// label-set JSON lengths past the record, instance domains claiming 2^31
// instances; and whole files that are empty, missing, a directory, a FIFO,
// a symlink loop or a sparse 10 GiB volume of zeros.
//
// Only the choice of the flipped bit is random (a PCG seeded with the seed
// and the record's position); everything else is exhaustive, and the
// caller samples.
//
// Designs rejected:
//   - Random byte soup (as a fuzzer makes): it rarely gets past the label,
//     and the Fuzz targets beside each decoder already do it far faster in
//     process. Mutants here aim at the fields a decoder must not trust.
//   - Reusing package format to find records: a mutant generator that
//     shares the reader's parsing shares its blind spots. The framing is
//     read here independently, from LOGARCHIVE(5) and docs/stream.md.
package mutate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// File is one file of an archive: its suffix (".meta", ".0", ".index", as
// appended to the base name) and its bytes.
type File struct {
	Suffix string
	Data   []byte
}

// Special says how a mutant's target is made when it is not plain bytes.
type Special int

// Specials.
const (
	Bytes       Special = iota // Data is the target's new content
	Missing                    // the target does not exist
	Directory                  // the target is an empty directory
	FIFO                       // the target is a named pipe nobody writes to
	SymlinkLoop                // the target is a symlink to itself
	Sparse                     // the target is Data followed by zeros up to SparseSize bytes
)

// SparseSize is the apparent size of a Sparse target: 10 GiB, mostly holes.
const SparseSize = 10 << 30

// Mutant is one hostile input.
type Mutant struct {
	// Name says what was done and where, e.g. ".0/numpmid=2^31-1@148(rec 1 result)".
	Name string
	// Family is the kind of mutation, for counting: trunc, cut, flip, len,
	// count, json-len, empty, missing, dir, fifo, symlink-loop, sparse.
	Family string
	// Target is the suffix of the file changed (".meta", ".0", ".index"),
	// or "stream".
	Target string
	// Kind is the kind of record damaged (see Record.Kind; a stream's
	// frame kind as "frame-0x06"), "" for whole-file mutants and cuts at
	// record boundaries.
	Kind string
	// Data is the new content of the target (see Special).
	Data    []byte
	Special Special
	// Offset is where the damage starts in the target, -1 for whole-file
	// mutants; InRecord says it is inside record data, where an error
	// should name the offset.
	Offset   int64
	InRecord bool
}

// Write makes the mutated archive in dir under base: every file of files
// as it is, except the mutant's target.
func (m *Mutant) Write(dir, base string, files []File) error {
	for _, f := range files {
		if f.Suffix == m.Target {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, base+f.Suffix), f.Data, 0o644); err != nil {
			return err
		}
	}
	p := filepath.Join(dir, base+m.Target)
	switch m.Special {
	case Bytes:
		return os.WriteFile(p, m.Data, 0o644)
	case Missing:
		return nil
	case Directory:
		return os.Mkdir(p, 0o755)
	case FIFO:
		return syscall.Mkfifo(p, 0o644)
	case SymlinkLoop:
		return os.Symlink(filepath.Base(p), p)
	case Sparse:
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		if _, err := f.Write(m.Data); err != nil {
			f.Close()
			return err
		}
		if err := f.Truncate(SparseSize); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	return fmt.Errorf("mutate: unknown special %d", m.Special)
}

// Record is one framed record (or index entry) found in a file.
type Record struct {
	Off, Len int
	Kind     string // label, desc, indom-v2, label-v2, text, indom, indom-delta, labelset, result, mark, entry, unknown
	N        int    // position in the file, from 0
}

// Version returns the archive version a file's label says (2 or 3), or 0.
func Version(data []byte) int {
	if len(data) < 8 {
		return 0
	}
	switch binary.BigEndian.Uint32(data[4:]) {
	case 0x50052602:
		return 2
	case 0x50052603:
		return 3
	}
	return 0
}

// Records returns the records of an archive file, walking the length words
// (and, in an index, the fixed-size entries after the label) until the
// framing stops making sense.
func Records(suffix string, data []byte) []Record {
	v := Version(data)
	var out []Record
	off := 0
	for off+8 <= len(data) {
		n := int(binary.BigEndian.Uint32(data[off:]))
		if n < 8 || n > len(data)-off || binary.BigEndian.Uint32(data[off+n-4:]) != uint32(n) {
			break
		}
		rec := Record{Off: off, Len: n, N: len(out)}
		rec.Kind = kindOf(suffix, data[off:off+n], len(out), v)
		out = append(out, rec)
		off += n
		if suffix == ".index" {
			break
		}
	}
	if suffix == ".index" && len(out) == 1 {
		es := 20
		if v == 3 {
			es = 32
		}
		for off+es <= len(data) {
			out = append(out, Record{Off: off, Len: es, Kind: "entry", N: len(out)})
			off += es
		}
	}
	return out
}

func kindOf(suffix string, rec []byte, n, v int) string {
	if n == 0 {
		return "label"
	}
	if suffix == ".meta" {
		switch binary.BigEndian.Uint32(rec[4:]) {
		case 1:
			return "desc"
		case 2:
			return "indom-v2"
		case 3:
			return "label-v2"
		case 4:
			return "text"
		case 5:
			return "indom"
		case 6:
			return "indom-delta"
		case 7:
			return "labelset"
		}
		return "unknown"
	}
	np := numpmidOff(v)
	if len(rec) >= np+4 && binary.BigEndian.Uint32(rec[np:]) == 0 {
		return "mark"
	}
	return "result"
}

// numpmidOff is the offset of a data record's numpmid from its first length
// word: after the timestamp (8 bytes in v2, 12 in v3).
func numpmidOff(v int) int {
	if v == 3 {
		return 16
	}
	return 12
}

// field is a count or length word inside a record, at an offset from the
// record's start.
type field struct {
	name string
	off  int
}

// fields returns the count and length fields of a record worth attacking.
// Offsets follow format's package doc (the code's layouts, not the man
// page's where they differ).
func fields(kind string, rec []byte, v int) []field {
	var fs []field
	add := func(name string, off int) {
		if off+4 <= len(rec)-4 {
			fs = append(fs, field{name, off})
		}
	}
	switch kind {
	case "desc":
		add("numnames", 28)
		add("namelen", 32)
	case "indom", "indom-delta":
		add("numinst", 24)
	case "indom-v2":
		add("numinst", 20)
	case "labelset":
		add("nsets", 28)
		add("jsonlen", 36)
		if len(rec) >= 40 {
			jl := int(binary.BigEndian.Uint32(rec[36:]))
			if jl >= 0 && 40+jl+4 <= len(rec)-4 {
				add("nlabels", 40+jl)
			}
		}
	case "label-v2":
		add("nsets", 24)
		add("jsonlen", 32)
		if len(rec) >= 36 {
			jl := int(binary.BigEndian.Uint32(rec[32:]))
			if jl >= 0 && 36+jl+4 <= len(rec)-4 {
				add("nlabels", 36+jl)
			}
		}
	case "result":
		np := numpmidOff(v)
		add("numpmid", np)
		add("numval", np+8)
		// the first value's pointer or inline value, when insitu or not
		add("value", np+20)
	case "entry":
		// volume, and in v2 the two 32-bit offsets
		if v == 3 {
			add("vol", 12)
		} else {
			add("vol", 8)
			add("metaoff", 12)
			add("dataoff", 16)
		}
	case "label":
		add("vol", 24-4*b2i(v == 2))
	}
	return fs
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rng returns the PCG for one record of one file under seed, so that
// adding a source or a record does not change the other mutants.
func rng(seed uint64, parts ...string) *rand.Rand {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

func put32(data []byte, off int, v uint32) []byte {
	out := append([]byte(nil), data...)
	binary.BigEndian.PutUint32(out[off:], v)
	return out
}

// perKind bounds the length-word and count-field mutants made per record
// kind and file: the first records of a kind exercise the same code as the
// rest.
const perKind = 3

// Archive returns the mutants of an archive given as its files. The result
// is the same for the same files and seed, in the same order.
func Archive(files []File, seed uint64) []Mutant {
	var out []Mutant
	for _, f := range files {
		out = append(out, fileMutants(f, seed)...)
	}
	// Whole-file mutants.
	for _, f := range files {
		out = append(out,
			Mutant{Name: f.Suffix + "/empty", Family: "empty", Target: f.Suffix, Data: []byte{}, Offset: -1},
			Mutant{Name: f.Suffix + "/missing", Family: "missing", Target: f.Suffix, Special: Missing, Offset: -1},
			Mutant{Name: f.Suffix + "/dir", Family: "dir", Target: f.Suffix, Special: Directory, Offset: -1},
			Mutant{Name: f.Suffix + "/fifo", Family: "fifo", Target: f.Suffix, Special: FIFO, Offset: -1},
			Mutant{Name: f.Suffix + "/symlink-loop", Family: "symlink-loop", Target: f.Suffix, Special: SymlinkLoop, Offset: -1},
		)
		if f.Suffix != ".meta" && f.Suffix != ".index" {
			out = append(out, Mutant{Name: f.Suffix + "/sparse-zeros-10GiB", Family: "sparse", Target: f.Suffix, Special: Sparse, Data: []byte{}, Offset: 0, InRecord: true})
			recs := Records(f.Suffix, f.Data)
			if len(recs) > 0 {
				l := recs[0]
				out = append(out, Mutant{Name: f.Suffix + "/label+sparse-zeros-10GiB", Family: "sparse", Target: f.Suffix, Special: Sparse,
					Data: f.Data[:l.Off+l.Len], Offset: int64(l.Off + l.Len), InRecord: true})
			}
		}
	}
	return out
}

func fileMutants(f File, seed uint64) []Mutant {
	data := f.Data
	v := Version(data)
	recs := Records(f.Suffix, data)
	var out []Mutant
	add := func(m Mutant) {
		if bytes.Equal(m.Data, data) {
			return // a field that already held the value
		}
		m.Target = f.Suffix
		m.Name = f.Suffix + "/" + m.Name
		out = append(out, m)
	}
	where := func(r Record) string { return fmt.Sprintf("(rec %d %s)", r.N, r.Kind) }

	// Truncation at every record boundary (the end of the file is not a
	// mutant), and inside every record: in its first length word, in the
	// middle, in its last length word.
	for _, r := range recs {
		if r.Off > 0 {
			add(Mutant{Name: fmt.Sprintf("trunc@%d", r.Off), Family: "trunc", Data: data[:r.Off:r.Off], Offset: int64(r.Off)})
		}
		for _, c := range []int{r.Off + 2, r.Off + r.Len/2, r.Off + r.Len - 2} {
			if c > r.Off && c < r.Off+r.Len && c < len(data) {
				add(Mutant{Name: fmt.Sprintf("cut@%d%s", c, where(r)), Family: "cut", Kind: r.Kind, Data: data[:c:c], Offset: int64(r.Off), InRecord: true})
			}
		}
	}
	// One bit flipped in each record, chosen by the seed.
	for _, r := range recs {
		g := rng(seed, f.Suffix, "flip", fmt.Sprint(r.Off))
		bit := g.IntN(r.Len * 8)
		off := r.Off + bit/8
		d := append([]byte(nil), data...)
		d[off] ^= 1 << (bit % 8)
		add(Mutant{Name: fmt.Sprintf("flip@%d.%d%s", off, bit%8, where(r)), Family: "flip", Kind: r.Kind, Data: d, Offset: int64(off), InRecord: true})
	}
	// Length words and count fields at 0, at the bytes left and at 2^31-1,
	// for the first records of each kind.
	seen := map[string]int{}
	for _, r := range recs {
		seen[r.Kind]++
		if seen[r.Kind] > perKind {
			continue
		}
		left := uint32(len(data) - r.Off)
		if r.Kind != "entry" {
			for _, lv := range []struct {
				name string
				v    uint32
			}{{"0", 0}, {"left", left}, {"left+4", left + 4}, {"2^31-1", 1<<31 - 1}, {"2^32-1", 1<<32 - 1}} {
				add(Mutant{Name: fmt.Sprintf("len=%s@%d%s", lv.name, r.Off, where(r)), Family: "len", Kind: r.Kind, Data: put32(data, r.Off, lv.v), Offset: int64(r.Off), InRecord: true})
			}
			// the trailing length word disagreeing with the head
			tail := r.Off + r.Len - 4
			add(Mutant{Name: fmt.Sprintf("taillen=%d@%d%s", r.Len+4, tail, where(r)), Family: "len", Kind: r.Kind, Data: put32(data, tail, uint32(r.Len+4)), Offset: int64(tail), InRecord: true})
		}
		rec := data[r.Off : r.Off+r.Len]
		for _, fl := range fields(r.Kind, rec, v) {
			at := r.Off + fl.off
			bytesLeft := uint32(r.Off + r.Len - 4 - (at + 4))
			vals := []struct {
				name string
				v    uint32
			}{{"0", 0}, {"left", bytesLeft}, {"left+1", bytesLeft + 1}, {"2^31-1", 1<<31 - 1}, {"-1", 1<<32 - 1}}
			switch fl.name {
			case "numinst":
				vals = append(vals, struct {
					name string
					v    uint32
				}{"2^31", 1 << 31})
			}
			fam := "count"
			if fl.name == "jsonlen" {
				fam = "json-len"
				vals = append(vals, struct {
					name string
					v    uint32
				}{"past-file", uint32(len(data)-at) + 1})
			}
			for _, cv := range vals {
				add(Mutant{Name: fmt.Sprintf("%s=%s@%d%s", fl.name, cv.name, at, where(r)), Family: fam, Kind: r.Kind, Data: put32(data, at, cv.v), Offset: int64(at), InRecord: true})
			}
		}
	}
	return out
}

// Frame is one frame of a pipe stream: its header's offset, kind and
// payload length.
type Frame struct {
	Off, Len int
	Kind     byte
}

// Frames walks a pipe stream's frames after its 12-byte header, stopping
// where the framing stops making sense.
func Frames(data []byte) []Frame {
	var out []Frame
	off := 12
	for off+20 <= len(data) {
		n := int(binary.BigEndian.Uint32(data[off+4:]))
		if n > len(data)-off-20 {
			break
		}
		out = append(out, Frame{Off: off, Len: n, Kind: data[off]})
		off += 20 + n
	}
	return out
}

// Stream returns the mutants of a pipe stream: cut at every frame boundary
// and inside each frame's header and payload, a bit flipped in each frame,
// and the length field of the first frames of each kind at 0, the bytes
// left and 2^31-1.
func Stream(data []byte, seed uint64) []Mutant {
	var out []Mutant
	add := func(m Mutant) {
		if bytes.Equal(m.Data, data) {
			return
		}
		m.Target = "stream"
		m.Name = "stream/" + m.Name
		out = append(out, m)
	}
	add(Mutant{Name: "empty", Family: "empty", Data: []byte{}, Offset: -1})
	// too short to be told from anything else: no offset to name
	add(Mutant{Name: "cut@6(header)", Family: "cut", Data: data[:6:6], Offset: 0})
	frames := Frames(data)
	seen := map[byte]int{}
	for i, fr := range frames {
		where := fmt.Sprintf("(frame %d kind 0x%02x)", i, fr.Kind)
		fk := fmt.Sprintf("frame-0x%02x", fr.Kind)
		add(Mutant{Name: fmt.Sprintf("trunc@%d", fr.Off), Family: "trunc", Data: data[:fr.Off:fr.Off], Offset: int64(fr.Off)})
		for _, c := range []int{fr.Off + 10, fr.Off + 20 + fr.Len/2} {
			if c > fr.Off && c < fr.Off+20+fr.Len && c < len(data) {
				add(Mutant{Name: fmt.Sprintf("cut@%d%s", c, where), Family: "cut", Kind: fk, Data: data[:c:c], Offset: int64(fr.Off), InRecord: true})
			}
		}
		g := rng(seed, "stream", "flip", fmt.Sprint(fr.Off))
		bit := g.IntN((20 + fr.Len) * 8)
		off := fr.Off + bit/8
		d := append([]byte(nil), data...)
		d[off] ^= 1 << (bit % 8)
		add(Mutant{Name: fmt.Sprintf("flip@%d.%d%s", off, bit%8, where), Family: "flip", Kind: fk, Data: d, Offset: int64(off), InRecord: true})
		seen[fr.Kind]++
		if seen[fr.Kind] > perKind {
			continue
		}
		left := uint32(len(data) - fr.Off - 20)
		for _, lv := range []struct {
			name string
			v    uint32
		}{{"0", 0}, {"left", left}, {"left+1", left + 1}, {"2^31-1", 1<<31 - 1}} {
			add(Mutant{Name: fmt.Sprintf("len=%s@%d%s", lv.name, fr.Off+4, where), Family: "len", Kind: fk, Data: put32(data, fr.Off+4, lv.v), Offset: int64(fr.Off), InRecord: true})
		}
		k := append([]byte(nil), data...)
		k[fr.Off] = 0x00
		add(Mutant{Name: fmt.Sprintf("kind=0x00@%d%s", fr.Off, where), Family: "kind", Kind: fk, Data: k, Offset: int64(fr.Off), InRecord: true})
	}
	return out
}

// Families returns the distinct families of ms in first-seen order.
func Families(ms []Mutant) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range ms {
		if !seen[m.Family] {
			seen[m.Family] = true
			out = append(out, m.Family)
		}
	}
	return out
}

// Sample returns at most per mutants of each target, family and record
// kind of ms (so that every kind of record gets its flips and cuts),
// chosen by seed, keeping their order; per <= 0 returns ms.
func Sample(ms []Mutant, per int, seed uint64) []Mutant {
	if per <= 0 {
		return ms
	}
	groups := map[string][]int{}
	var keys []string
	for i, m := range ms {
		k := m.Target + " " + m.Family + " " + m.Kind
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	keep := make([]bool, len(ms))
	for _, k := range keys {
		idx := groups[k]
		g := rng(seed, "sample", k)
		g.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		for _, i := range idx[:min(per, len(idx))] {
			keep[i] = true
		}
	}
	var out []Mutant
	for i, m := range ms {
		if keep[i] {
			out = append(out, m)
		}
	}
	return out
}

// Match reports whether a mutant's name contains any of the comma-separated
// patterns (all match when pats is empty): the way to rerun one mutant.
func Match(name, pats string) bool {
	if pats == "" {
		return true
	}
	for _, p := range strings.Split(pats, ",") {
		if p != "" && strings.Contains(name, p) {
			return true
		}
	}
	return false
}
