// Package summary computes statistics for each metric and instance of a
// PCP archive (averages, extremes and their times, counts, sums,
// histograms) and prints them as PCP 6.0.3's pmlogsummary does, byte for
// byte: pcpsummary is a thin command over it.
//
//	format.Archive ──Meta()──▶ dump.ArchiveMeta (libpcp's namespace, descriptors, instance domains)
//	               ──Records(DataOnly, From(-S))──▶ results, marks ──▶ accumulator ──┐
//	               (with -B, once more) ──▶ accumulator.bin ──────────────────────────┤
//	                                   namespace traversal order ◀── print ◀─────────┘
//
// # Data flow
//
// Run reads the archive's metadata as libpcp holds it once the archive is
// open (dump.ArchiveMeta: the namespace tree in libpcp's order, the first
// descriptor of each metric, instance domains newest first), resolves the
// window (-S, -T against the label's start and the last record's time,
// both truncated to microseconds, as pmGetContextOptions has them), and
// walks the window's records once. Each result updates one instStats per
// metric-instance, in pmlogsummary's arithmetic; each <mark> holds discrete
// values to it and makes every instance skip its next interval. At the
// end, a traversal of the namespace (from the root, or from each name on
// the command line) prints each metric under the first of its names met,
// its instances in order of first appearance: each instance's statistics
// are completed into a Stat, which prints as pmlogsummary's line or, for
// pcpsummary --json, as a JSON object (json.go).
//
// Memory is flat in the archive's length: the state is a fixed-size
// record per metric-instance (plus -B's bins), nothing per sample.
//
// # Exactness
//
// pmlogsummary's numbers are reproduced, not approximated:
//   - Times are struct timeval (v3 nanoseconds are truncated to
//     microseconds, as pmFetchArchive does), and intervals are turned into
//     seconds as pmtimevalToReal does, in x87 long double (64-bit
//     mantissa) rounded once to double (see realCache.toReal).
//   - Every quirk that shows in the output is kept: a discrete metric's
//     count is its observations after the added mark and end points are
//     taken off (as an unsigned int); a counter's minimum time stays at
//     its first sample when the first rate is the minimum; a counter
//     interval whose time difference is 0 is skipped without moving on;
//     the first instance lookup is by position; a value that cannot be
//     decoded as the first of its instance aborts the summary.
//   - Values are read as pmExtractValue reads them on a little-endian
//     host (dump.ExtractDouble), old loggers' untyped blocks included.
//   - Numbers print as printf("%.*f") (Go's strconv agrees with glibc on
//     every finite double; NaN and infinities are spelled as glibc does).
//
// # Histograms (-B)
//
// A bin is an equal share of [minimum, maximum] of the instance's values
// (rates, for counters), and those bounds are known only once the window
// has been read. pmlogsummary reads the window a second time, and that
// second pass changes what it prints besides the bins: it counts marks
// again, restarts discrete metrics' counts and first times, and leaves
// their averages computed from a mix of both passes (the example archive's
// hinv.ncpu averages 8.000 without -B and 11.661 with -B 3). To print the
// same bytes, the accumulator makes the same second pass over the same
// records (accumulator.bin): the archive is read twice with -B, and only
// with -B. Memory stays flat: the bins are per instance.
//
// # Designs rejected
//
//   - Keeping each instance's values (or rates) from the first pass and
//     binning them at the end: one pass, but memory grows with the
//     archive's length, and it would not reproduce the second pass's
//     effect on the averages.
//   - A streaming sketch (fixed fine-grained bins rescaled as the range
//     grows): flat and one pass, but the bin edges would not be
//     pmlogsummary's, so the counts would differ near them.
//   - float64 for intervals (sec + usec/1e6): simpler and faster, but it
//     differs from long double in the last bit for one interval in six
//     between 1 and 2 seconds long, one in two hundred around a minute
//     (measured over every microsecond), and such bits reach the printed
//     digits of some averages. The conversion goes through math/big,
//     with a small cache: the instances of one record share an interval.
//   - Reading the metadata from the record stream as it comes: the output
//     order is the whole namespace's, and instance names come from the
//     newest instance domain version, which may follow the window; so the
//     archive's .meta is loaded first, as libpcp does. A stream on
//     standard input is summarised as it arrives (Streamed): with its
//     whole metadata when it carries it up front (a METADATA frame), or
//     taking each descriptor as it comes and making the output from the
//     whole metadata once the stream is read (NewStreamedLate). One that
//     -B needs whole, whose -S or -T counts back from the end, or that is
//     a reduced archive's without a frame, is spilled to a scratch archive
//     by the command.
//   - A map from instance to position instead of pmlogsummary's "same
//     position as in the previous result, else search": faster to write,
//     but pmlogsummary's rule decides which entry a duplicated instance
//     updates; the map here only speeds up the search and gives the same
//     (first) answer.
package summary
