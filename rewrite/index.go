package rewrite

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/pcptools/pcptools/format"
)

// FixIndex replaces the temporal index of the archive at base (written by
// format.Writer from a Rewriter's records) with pmlogrewrite's, from the
// Rewriter's IndexHints. It finds the offsets by walking the record
// lengths of the .meta and of the (uncompressed) data volumes: it reads a
// few bytes per record, and keeps only the offsets the hints ask for. The
// new index is written to a temporary file, synced when sync is set (as
// pmlogrewrite does with -i) and renamed over the old one.
func FixIndex(base string, version int, hints []IndexHint, sync bool) error {
	// The record numbers wanted, in order.
	var wantMeta, wantData []int
	for _, h := range hints {
		if h.Meta >= 0 {
			wantMeta = append(wantMeta, h.Meta)
		}
		wantData = append(wantData, h.Data)
	}
	sortUniq := func(s []int) []int {
		sort.Ints(s)
		out := s[:0]
		for i, v := range s {
			if i == 0 || v != s[i-1] {
				out = append(out, v)
			}
		}
		return out
	}
	wantMeta, wantData = sortUniq(wantMeta), sortUniq(wantData)

	metaAt := map[int]int64{}
	metaEnd, _, err := recordOffsets(base+".meta", 0, wantMeta, func(k int, off int64) { metaAt[k] = off })
	if err != nil {
		return err
	}
	vols, err := volumes(base)
	if err != nil {
		return err
	}
	type pos struct {
		vol int32
		off int64
	}
	dataAt := map[int]pos{}
	var end pos
	seen := 0 // data records in the volumes before
	for _, v := range vols {
		// The wanted records from this volume on, renumbered from 0.
		var want []int
		for _, k := range wantData {
			if k >= seen {
				want = append(want, k-seen)
			}
		}
		vol := int32(v.num)
		e, n, err := recordOffsets(v.path, seen, want, func(k int, off int64) { dataAt[k] = pos{vol, off} })
		if err != nil {
			return err
		}
		seen += n
		end = pos{vol, e}
	}
	idxPath := base + ".index"
	old, err := os.ReadFile(idxPath)
	if err != nil {
		return err
	}
	ls := format.LabelSize(version)
	if len(old) < ls {
		return fmt.Errorf("%s: shorter than its label", idxPath)
	}
	buf := append([]byte(nil), old[:ls]...)
	for _, h := range hints {
		p, ok := dataAt[h.Data]
		if !ok {
			p = end
		}
		m, ok := metaAt[h.Meta]
		if h.Meta < 0 || !ok {
			m = metaEnd
		}
		buf = format.AppendIndexEntry(buf, format.IndexEntry{T: h.T, Vol: p.vol, MetaOff: m, DataOff: p.off}, version)
	}
	tmp := filepath.Join(filepath.Dir(idxPath), "."+filepath.Base(idxPath)+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			os.Remove(tmp)
			return err
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, idxPath); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// recordOffsets walks the records after the label of a PCP archive file
// and calls found with the offset of each record whose number (from 0,
// plus first) is listed in want (sorted, numbers relative to the file). It
// returns the file's size and its number of records.
func recordOffsets(path string, first int, want []int, found func(k int, off int64)) (int64, int, error) {
	size := int64(0)
	k := 0
	err := walkRecords(path, func(off int64) {
		for len(want) > 0 && want[0] < k {
			want = want[1:]
		}
		if len(want) > 0 && want[0] == k {
			found(first+k, off)
		}
		k++
	}, &size)
	return size, k, err
}

// walkRecords calls each with the offset of every record after the label,
// reading only the length words, and sets *size to the file's size.
func walkRecords(path string, each func(off int64), size *int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	*size = st.Size()
	var w [4]byte
	first := true
	for off := int64(0); off < *size; {
		if _, err := f.ReadAt(w[:], off); err != nil {
			if err == io.EOF {
				break
			}
			return err
		}
		n := int64(binary.BigEndian.Uint32(w[:]))
		if n < 8 || off+n > *size {
			return fmt.Errorf("%s: offset %d: bad record length %d", path, off, n)
		}
		if !first {
			each(off)
		}
		first = false
		off += n
	}
	return nil
}

type volFile struct {
	num  int
	path string
}

func volumes(base string) ([]volFile, error) {
	dir, name := filepath.Dir(base), filepath.Base(base)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []volFile
	for _, e := range ents {
		s, ok := strings.CutPrefix(e.Name(), name+".")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			continue
		}
		out = append(out, volFile{n, filepath.Join(dir, e.Name())})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].num < out[j].num })
	return out, nil
}
