package mmv

import (
	"context"
	"os"
	"syscall"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// RecordOptions say how long and how often to sample.
type RecordOptions struct {
	Interval time.Duration // between samples (0: 1s)
	Count    int           // stop after this many samples (0: no limit)
	Duration time.Duration // stop after this long (0: no limit)
	Hostname string        // for the archive label ("": os.Hostname)
	Timezone string        // for the archive label ("": UTC)
	Writer   format.WriterOptions
	// Stats, when set, is told at the end the CPU time (user and
	// system, of the whole process) the samples after the first took,
	// per sample: what recording costs once the metadata is written.
	Stats func(samples int, user, sys time.Duration)
}

// Output is where Record writes: an archive (format.Writer, through
// Archive) or the record stream (the tools' Sink). Flush, when the output
// has it, is called after each sample, so that a stream's reader sees
// each sample as it is taken.
type Output interface {
	Write(stream.Record) error
	Close() error
	Abort(error)
}

// Archive is an Output writing the archive named output.
func Archive(output string, o format.WriterOptions) (Output, error) {
	w, err := format.Create(output, o)
	if err != nil {
		return nil, err
	}
	return archiveOut{w}, nil
}

type archiveOut struct{ *format.Writer }

func (a archiveOut) Abort(error) { a.Writer.Abort() }

// Record samples s into the archive named output: RecordTo an Archive.
func Record(ctx context.Context, s *Sampler, output string, o RecordOptions) (samples int, err error) {
	if o.Writer.Version == 0 {
		o.Writer.Version = 3
	}
	w, err := Archive(output, o.Writer)
	if err != nil {
		return 0, err
	}
	return RecordTo(ctx, s, w, o)
}

// RecordTo samples s into w until the count or duration is reached or
// ctx is done (SIGINT, SIGTERM): the output is then finished (an
// archive's index written, files renamed into place; a stream's END
// frame) as at a normal end. On an error the output is aborted (a partial
// archive thrown away; a stream ends in an error frame).
func RecordTo(ctx context.Context, s *Sampler, w Output, o RecordOptions) (samples int, err error) {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Hostname == "" {
		o.Hostname, _ = os.Hostname()
	}
	if o.Timezone == "" {
		o.Timezone = "UTC"
	}
	if o.Writer.Version == 0 {
		o.Writer.Version = 3
	}
	defer func() {
		if err != nil {
			w.Abort(err)
		}
	}()
	defer s.Close()
	flush, _ := w.(interface{ Flush() error })
	start := time.Now()
	if err := w.Write(&stream.Label{Version: o.Writer.Version, PID: int32(os.Getpid()), Start: stream.FromTime(start),
		Hostname: o.Hostname, Timezone: o.Timezone}); err != nil {
		return 0, err
	}
	// pmcd's context labels, which pmlogger records with the first
	// metric it describes, at the first sample's time
	if err := w.Write(&stream.LabelSet{T: stream.FromTime(start), Type: stream.LabelContext, Ident: uint32(stream.PMIDNull),
		Sets: []stream.OneLabelSet{ContextLabels()}}); err != nil {
		return 0, err
	}
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	t := start
	var first syscall.Rusage
	if o.Stats != nil {
		defer func() {
			var last syscall.Rusage
			if err == nil && samples > 1 && syscall.Getrusage(syscall.RUSAGE_SELF, &last) == nil {
				n := time.Duration(samples - 1)
				o.Stats(samples-1, time.Duration(last.Utime.Nano()-first.Utime.Nano())/n, time.Duration(last.Stime.Nano()-first.Stime.Nano())/n)
			}
		}()
	}
	for {
		if err := s.Sample(t, w.Write); err != nil {
			return samples, err
		}
		if flush != nil {
			if err := flush.Flush(); err != nil {
				return samples, err
			}
		}
		samples++
		if samples == 1 && o.Stats != nil {
			syscall.Getrusage(syscall.RUSAGE_SELF, &first)
		}
		if o.Count > 0 && samples >= o.Count {
			break
		}
		if o.Duration > 0 && t.Add(o.Interval).Sub(start) > o.Duration {
			break
		}
		select {
		case <-ctx.Done():
			return samples, w.Close()
		case t = <-tick.C:
		}
	}
	return samples, w.Close()
}
