package export

import (
	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// Source is what OpenMetrics and Parquet export: an archive, or a record
// stream read once, as it arrives, with the metadata its METADATA frame
// gave up front (so that Parquet's file metadata, the series' labels and
// the counters to turn into rates are known before the first value, as
// they are for an archive). A stream without that frame has to be spilled
// to an archive first (toolio.OpenStdin does).
type Source struct {
	name    string // for messages: the archive's base name ("" for a stream, whose reader names it)
	host    string
	meta    *format.Metadata
	samples func(dump.Options, func(*dump.Sample) error) error
}

// FromArchive is the Source of an archive.
func FromArchive(a *format.Archive) (*Source, error) {
	meta, err := a.Meta()
	if err != nil {
		return nil, err
	}
	return &Source{name: a.Base(), host: a.Label().Hostname, meta: meta,
		samples: func(o dump.Options, f func(*dump.Sample) error) error { return dump.Samples(a, o, f) }}, nil
}

// FromStream is the Source of a record stream (it, from its first label)
// whose METADATA frame gave meta. It can be exported once, with options
// that dump.ExportStreamable allows. A result of a metric with no
// descriptor before it ends the export with an error, as it ends a copy
// of the stream (stream.Described): the exporter, which skips the values
// of metrics it does not know, would leave it out without a word.
func FromStream(meta *format.Metadata, it stream.Iterator) *Source {
	it = stream.Described(it)
	return &Source{name: "", host: meta.Label.Hostname, meta: meta,
		samples: func(o dump.Options, f func(*dump.Sample) error) error { return dump.SamplesStream(meta, it, o, f) }}
}
