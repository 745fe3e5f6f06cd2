package dump

import (
	"math"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// ArchiveMeta is an archive's metadata as libpcp holds it once the archive
// is open, for the other tools that print what a PCP tool prints in the
// order libpcp's structures give (pcpsummary as pmlogsummary): the
// namespace built from the descriptors, and the instance domain versions
// newest first.
type ArchiveMeta struct{ pm *pcpMeta }

// NewArchiveMeta arranges m as libpcp would. It fails, as libpcp refuses
// to open the archive, when two descriptors of one metric disagree.
func NewArchiveMeta(m *format.Metadata) (*ArchiveMeta, error) {
	pm := newPCPMeta(m)
	if pm.descErr != nil {
		return nil, pm.descErr
	}
	return &ArchiveMeta{pm}, nil
}

// Desc returns a metric's descriptor (the first of its PMID), as
// pmLookupDesc does.
func (a *ArchiveMeta) Desc(p stream.PMID) (*stream.Desc, bool) {
	d, ok := a.pm.byPMID[p]
	return d, ok
}

// Lookup resolves a full metric name to its PMID, as pmLookupName does.
func (a *ArchiveMeta) Lookup(name string) (stream.PMID, bool) {
	n := a.pm.ns.locate(name)
	if n == nil || n.first != nil {
		return 0, false
	}
	return n.pmid, true
}

// Traverse calls fn with every leaf name at or below name ("" is the
// root), in the order pmTraversePMNS gives them. It reports false for an
// unknown name.
func (a *ArchiveMeta) Traverse(name string, fn func(leaf string)) bool {
	n := &a.pm.ns.root
	if name != "" {
		if n = a.pm.ns.locate(name); n == nil {
			return false
		}
	}
	if n.first == nil {
		fn(name)
		return true
	}
	var walk func(n *pmnsNode, prefix string)
	walk = func(n *pmnsNode, prefix string) {
		for c := n.first; c != nil; c = c.next {
			full := c.name
			if prefix != "" {
				full = prefix + "." + c.name
			}
			if c.first == nil {
				fn(full)
			} else {
				walk(c, full)
			}
		}
	}
	walk(n, name)
	return true
}

// InstName returns the name of an instance, as pmNameInDomArchive finds
// it: in the newest version of the domain that holds the instance.
func (a *ArchiveMeta) InstName(id stream.InDomID, inst int32) (string, bool) {
	if id == stream.InDomNull {
		return "", false
	}
	l := a.pm.indomsBy[id]
	if l == nil {
		return "", false
	}
	for v := l.head; v != nil; v = v.next {
		if name, ok := v.name(inst); ok {
			return name, true
		}
	}
	return "", false
}

// ErrStr returns the message pmErrStr gives for a PCP error code (such as
// a value set's negative numval).
func ErrStr(code int32) string { return string(appendErrStr(nil, code)) }

// ExtractDouble reads a value of a numeric type as pmExtractValue(...,
// PM_TYPE_DOUBLE) does on a little-endian host, old loggers' untyped
// blocks included; ok is false where libpcp fails with a conversion
// error.
func ExtractDouble(typ stream.Type, v stream.Value) (f float64, ok bool) {
	if !extractOK(typ, v.Insitu, v) {
		return 0, false
	}
	switch typ {
	case stream.Type32:
		return float64(int32(v.Word)), true
	case stream.TypeU32:
		return float64(v.Word), true
	case stream.Type64:
		return float64(int64(blockUint64(v))), true
	case stream.TypeU64:
		return float64(blockUint64(v)), true
	case stream.TypeFloat:
		if v.Insitu {
			return float64(math.Float32frombits(v.Word)), true
		}
		return float64(math.Float32frombits(blockUint32(v))), true
	case stream.TypeDouble:
		return math.Float64frombits(blockUint64(v)), true
	}
	return 0, false
}

// Names returns a metric's names in the order pmNameAll gives them.
func (a *ArchiveMeta) Names(p stream.PMID) []string { return a.pm.names(p) }
