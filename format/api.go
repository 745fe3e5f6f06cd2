package format

import (
	"github.com/pcptools/pcptools/stream"
)

// This file fixes the contract between the archive reader, the writer and
// their users. The implementations live in reader.go and writer.go.

// Metadata is the whole of an archive's .meta file, loaded at once, as
// libpcp loads it when an archive is opened. Dump views and checks use it;
// streaming tools do not need it.
type Metadata struct {
	Label stream.Label
	// Descs in .meta order.
	Descs []*stream.Desc
	// ByPMID indexes Descs.
	ByPMID map[stream.PMID]*stream.Desc
	// InDoms holds every instance domain record in .meta order, as on disk.
	InDoms []*stream.InDom
	// Resolved holds, per instance domain, every version resolved to a full
	// set (deltas applied), in time order.
	Resolved map[stream.InDomID][]*stream.InstanceSet
	// LabelSets in .meta order.
	LabelSets []*stream.LabelSet
	// Texts in .meta order.
	Texts []*stream.Text
}

// InstancesAt returns the version of an instance domain in force at t (the
// latest with a timestamp at or before t), or the first version when t is
// before all of them, or nil when the domain is unknown.
func (m *Metadata) InstancesAt(id stream.InDomID, t stream.Timestamp) *stream.InstanceSet {
	vs := m.Resolved[id]
	if len(vs) == 0 {
		return nil
	}
	best := vs[0]
	for _, v := range vs {
		if v.T.After(t) {
			break
		}
		best = v
	}
	return best
}

// WriterOptions configure Create.
type WriterOptions struct {
	// Version of the output, 2 or 3; 0 means the version of the first label
	// written.
	Version int
	// VolumeRecords starts a new volume after this many data records
	// (marks count); 0 means no limit.
	VolumeRecords int
	// VolumeBytes starts a new volume before a record would take the volume
	// past this size; 0 means the format's limit (2^31-1 bytes for v2).
	VolumeBytes int64
	// KeepVolumes starts a new volume where the stream says the input did
	// (a Label record with Vol > 0 between data records, as the reader
	// emits at each volume after the first), so that a copy keeps the
	// input's volumes.
	KeepVolumes bool
	// DeltaInDoms applies PCP's delta rule (see deltaInDom) to full v3
	// instance domain records too, not only to v2 records written to a v3
	// archive: pmlogextract and pmlogrewrite re-encode every instance
	// domain they write this way, while a copy keeps the records as given.
	DeltaInDoms bool
	// IndexRepeats lets two temporal index entries share a timestamp, as
	// pmlogextract's do (it means to skip the second but forgets the first
	// between records); by default a timestamp gets one entry.
	IndexRepeats bool
	// Zstd writes data volumes as seekable zstd (.N.zst).
	Zstd bool
	// Xz writes data volumes as xz (.N.xz) in independent blocks with an
	// index, as `xz -T2` does, compressed on every core; PCP reads them
	// (6.0.3 too), seeking with the index. Zstd wins when both are set.
	Xz bool
	// Overwrite allows replacing an existing archive of the same name. The
	// replacement is atomic as far as a directory allows: Close moves the
	// old archive's files aside, renames the new ones into place, and only
	// then removes the old ones; if any step fails, the old archive is put
	// back as it was. It is how an archive is rewritten in place (-i).
	Overwrite bool
	// RecordHook, when set, is told where each record goes as it is
	// written: a metadata record by its number among the .meta's records
	// (from 0, after the label) and its offset; a data record by its
	// number, volume and offset. A tool that places index entries by rules
	// of its own (pmlogrewrite's, with ManualIndex) takes its offsets from
	// it, instead of walking the files afterwards.
	RecordHook func(meta bool, n int64, vol int32, off int64)
	// StartAtFirstRecord sets the label's start time to the first result or
	// mark written (as pmlogextract does) instead of the input label's.
	StartAtFirstRecord bool
	// NoSync skips the sync of each file before it is renamed into place,
	// as PCP's own tools do: the output is still complete before it
	// appears under its name, but a system crash soon after may leave it
	// without its content. For scratch outputs, and for comparisons with
	// tools that do not sync.
	NoSync bool
	// ManualIndex leaves the temporal index to the caller (Writer.AddIndex,
	// with Writer.Offsets), for a tool that must place entries by rules of
	// its own (pmlogreduce's): the writer then adds none, not even the final
	// one.
	ManualIndex bool
	// Warn receives non-fatal problems; nil discards them.
	Warn func(error)
}
