// Package reduce subsamples a PCP archive for long-term storage: one record
// every interval instead of every sample.
//
// The mode implemented so far, Compat, writes what pmlogreduce (PCP 6.0.3)
// writes, byte for byte apart from the label's PID. That program does not
// do what its manual says (no averages, no counter-wrap handling): it
// samples libpcp's interpolation engine every interval and copies what it
// gets, so this package reproduces that engine's answers:
//
//   - instant metrics: the last value at or before the step, when a later
//     one exists (no <mark> between);
//   - discrete metrics: the last value at or before the step;
//   - counters: the linear interpolation between the values either side,
//     rounded, in the C expression's own double arithmetic (times are
//     differences computed in long double and rounded, as libpcp does), no
//     value at the first step after a <mark> when the previous step had
//     values; 32-bit counters are written as 64-bit values and
//     descriptors, raw and unwrapped;
//   - a value is written only when the metric-instance was logged in the
//     interval (or has never been written), a metric with no value at all
//     is written as "no values", every <mark> is copied each time
//     pmlogreduce's scan reads it (so some twice), labels and help text are
//     dropped, aggregate and event metrics are skipped with a warning, and
//     the temporal index gets pmlogreduce's entries.
//
// The Native mode (native.go, layout.go, rereduce.go) is the other: one
// pass over the records, per interval and metric-instance the
// time-weighted mean (instant), the value in force (discrete, string), the
// monotone 64-bit counter, and aggregates under pcpreduce.AGG.NAME; see
// docs/pcpreduce.md "Native mode".
//
// Data flow:
//
//	.meta ──loadMeta──▶ namespace order, instance unions, birth/death ─┐
//	                                                                    ▼
//	.N ──cursor──▶ consume records ≤ step ──▶ per metric-instance state ──▶ interpolate ──▶ rewrite ──▶ format.Writer
//	       │        (priors, "seen", marks)            ▲
//	       └── look ahead past the step ───────────────┘ (first event after the step, per instance)
//	.meta ──second cursor──▶ instance domain in force at step+interval ──▶ indom records
//
// Streaming: interpolation at step t needs, for each metric-instance, the
// last value at or before t (kept as the cursor consumes records) and the
// first event after t (a value, a <mark>, or the end). The latter is
// looked up only for the instant and counter instances whose cached
// answer is stale, by reading ahead of the consumed position into a
// bounded buffer of records; once an instance is found, its answer stays
// valid until the cursor passes it, and "nothing until the end" stays valid
// for ever. When the buffer is full (an instance that has died, say), the
// look-ahead goes on with a second reader of the archive that keeps no
// records. Memory is therefore one state per metric-instance (values
// included) plus the bounded buffer, whatever the archive's length.
//
// Designs rejected:
//   - Loading the archive (libpcp's way is to seek back and forth): memory
//     proportional to the archive.
//   - Queuing every future value of every instance up to the farthest one
//     needed: one instance that is never logged again makes the queue the
//     rest of the archive.
//   - Re-reading from the step for every look-ahead: simple, but a second
//     pass over up to 100 kB (an index interval) per step; the buffer makes
//     the common case (every instance logged every sample) read each
//     record once.
//   - Reusing format.Writer's own index rules (pmlogextract's): pmlogreduce
//     indexes only its results, never its marks, and always ends with an
//     entry at the end of the files; the writer lets the caller place the
//     entries instead (WriterOptions.ManualIndex).
package reduce

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Mode selects what a reduction writes.
type Mode int

const (
	// Compat writes what pmlogreduce (PCP 6.0.3) writes.
	Compat Mode = iota
	// Native writes per-interval values and aggregates (docs/pcpreduce.md,
	// "Native mode").
	Native
)

// DefaultInterval is pmlogreduce's default output interval.
const DefaultInterval = 600 * time.Second

// Options configure Run.
type Options struct {
	Mode     Mode
	Interval time.Duration // output interval; DefaultInterval when 0
	// Trace (compatible mode) writes pmlogreduce's -D appl0 trace on
	// Stderr: the window, each metric's descriptors in and out, each
	// instance domain written.
	Trace bool
	// Start, Finish and Align are -S, -T and -A in PCP's time syntax ("" for
	// none).
	Start, Finish, Align string
	// Samples stops after this many records (-s); negative for no limit.
	Samples int
	// VolSamples starts a new volume every this many records (-v); 0 for
	// none.
	VolSamples int
	// ArchiveZone (-z) and Zone (-Z) choose the timezone of -S and -T.
	ArchiveZone bool
	Zone        string
	// NoSync skips the sync before the output is renamed into place.
	NoSync bool
	// AlignTo (native mode, -A) puts the first interval's start at the
	// archive's start rounded down to a multiple of AlignTo; without it,
	// interval ends are multiples of the interval since the epoch.
	AlignTo time.Duration
	// IgnoreMarks (native mode) treats the input's <mark>s as libpcp
	// does with PCP_IGNORE_MARK_RECORDS: IgnoreAllMarks drops them all;
	// otherwise a <mark> whose results before and after are at most
	// IgnoreMarks apart is dropped (0: none), and the samples on either
	// side join up (counters carry on, the time between is covered).
	IgnoreMarks    time.Duration
	IgnoreAllMarks bool
	// Zstd (native mode) compresses the output's volumes (a v3 archive).
	Zstd bool
	// Overwrite (native mode) replaces existing output archives, which
	// stay whole until the new ones are complete.
	Overwrite bool
	// NoProgress (native mode) shows no progress display on Stderr
	// (there is one when it is a terminal; never in Compat mode).
	NoProgress bool
	// Prog names the program in messages ("pmlogreduce", "pcpreduce").
	Prog string
	// Stdout receives pmlogreduce's timezone note; Stderr its warnings.
	Stdout, Stderr io.Writer
}

// ErrInterval is returned for an interval that is not positive.
var ErrInterval = errors.New("the interval must be positive")

// Run reduces the archive input into a new archive output. Nothing is
// written at output unless the whole reduction succeeds.
func Run(input, output string, opts Options) error {
	if opts.Interval == 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Interval < 0 || opts.Interval.Truncate(time.Microsecond) <= 0 {
		return fmt.Errorf("-t %v: %w", opts.Interval, ErrInterval)
	}
	opts.defaults()
	switch opts.Mode {
	case Compat:
		return runCompat(input, output, &opts)
	case Native:
		return RunNative(input, []Output{{output, opts.Interval}}, opts)
	}
	return fmt.Errorf("reduction mode %d is not implemented", opts.Mode)
}

// defaults fills in the writers and the program name when not given.
func (o *Options) defaults() {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Prog == "" {
		o.Prog = "pcpreduce"
	}
}
