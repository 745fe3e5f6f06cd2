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
// lengths of the .meta and of the (uncompressed) data volumes, so it reads
// a few bytes per record. The new index is written to a temporary file,
// synced and renamed over the old one.
func FixIndex(base string, version int, hints []IndexHint) error {
	metaOffs, metaEnd, err := recordOffsets(base + ".meta")
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
	var data []pos
	var end pos
	for _, v := range vols {
		offs, e, err := recordOffsets(v.path)
		if err != nil {
			return err
		}
		for _, o := range offs {
			data = append(data, pos{int32(v.num), o})
		}
		end = pos{int32(v.num), e}
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
		p := end
		if h.Data < len(data) {
			p = data[h.Data]
		}
		m := metaEnd
		if h.Meta >= 0 && h.Meta < len(metaOffs) {
			m = metaOffs[h.Meta]
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
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
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

// recordOffsets returns the offset of every record after the label of a
// PCP archive file, and the file's size.
func recordOffsets(path string) ([]int64, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size := st.Size()
	var offs []int64
	var w [4]byte
	first := true
	for off := int64(0); off < size; {
		if _, err := f.ReadAt(w[:], off); err != nil {
			if err == io.EOF {
				break
			}
			return nil, 0, err
		}
		n := int64(binary.BigEndian.Uint32(w[:]))
		if n < 8 || off+n > size {
			return nil, 0, fmt.Errorf("%s: offset %d: bad record length %d", path, off, n)
		}
		if !first {
			offs = append(offs, off)
		}
		first = false
		off += n
	}
	return offs, size, nil
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
