package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/pcptime"
	"github.com/pcptools/pcptools/stream"
)

type views struct {
	dump.Options
	json, csv bool
}

func (v views) any() bool {
	o := v.Options
	return o.All || o.Descs || o.LabelSets || o.HelpText || o.InDoms || o.DiskInDoms || o.Label ||
		o.LabelVerbose || o.Values || o.Marks || o.Reverse || o.Sizes || o.Index || o.TimeFormat > 0 ||
		o.ArchiveZone || o.Zone != "" || o.Start != "" || o.Finish != ""
}

func viewOptions(c *cli.Context, xcount int, metrics []string) views {
	return views{
		Options: dump.Options{
			All: c.Bool("a"), Descs: c.Bool("d"), LabelSets: c.Bool("e"), HelpText: c.Bool("h"),
			InDoms: c.Bool("i"), DiskInDoms: c.Bool("I"), Label: c.Bool("l"), LabelVerbose: c.Bool("L"),
			Values: c.Bool("m"), Marks: c.Bool("M"), Reverse: c.Bool("r"), Sizes: c.Bool("s"),
			Index: c.Bool("t"), TimeFormat: xcount, ArchiveZone: c.Bool("z"), Zone: c.String("Z"),
			Start: c.String("S"), Finish: c.String("T"), Metrics: metrics,
		},
		json: c.Bool("json"),
		csv:  c.Bool("csv"),
	}
}

// dumpArchives prints the views of one archive, of several joined in
// time, or of the stream on standard input. Joined archives and streams
// are read as they come for --csv and the values view (-m), and for
// --json when the stream starts with a METADATA frame, their metadata
// filed as it comes (dump.ExportStreamable, dump.Streamable: not with
// metric names, nor a window counted back from the end, which a stream
// has none to give before it is over). A stream that starts with a
// METADATA frame brings the whole metadata up front, and is read as it
// comes for the views that list it and for metric names too
// (dump.FrameStreamable). For the rest they are first written to a
// temporary archive: the other views need the whole of the metadata, or
// the archive's end, index or sizes, as pmdumplog has them.
func dumpArchives(c *cli.Context, names []string, v views, stdin *os.File, stdout, stderr io.Writer) error {
	if v.json && v.csv {
		return toolio.UsageError{Msg: "--json and --csv: choose one"}
	}
	if v.ArchiveZone && v.Zone != "" {
		return toolio.UsageError{Msg: "-z and -Z are mutually exclusive"}
	}
	v.Warn, v.Prog = stderr, "pcpcat"
	var a *format.Archive
	if len(names) == 1 {
		var err error
		a, err = format.Open(names[0], format.WithWarn(warner(stderr)))
		if err != nil {
			return err
		}
	} else {
		streamOK := dump.Streamable(v.Options)
		frameOK := dump.FrameStreamable(v.Options)
		metaOnly := !v.json && !v.csv && dump.MetaStreamable(v.Options)
		if v.json || v.csv {
			streamOK = dump.ExportStreamable(v.Options)
			frameOK = dump.ExportFrameStreamable(v.Options)
		}
		if metaOnly {
			// the metadata views: the stream read to its end, its
			// metadata kept, nothing spilled
			in, err := toolio.OpenInputs(names, stdin, warner(stderr))
			if err != nil {
				return err
			}
			defer in.Close()
			return dump.DumpStreamMeta(stdout, stream.Described(in.Iter), v.Options)
		}
		// JSON prints the metadata records where they come: a stream
		// without a METADATA frame may bring them in another order than
		// the archive it would make gives them back, so it spills.
		in, err := toolio.OpenGrowing(names, stdin, "pcpcat-", streamOK, frameOK, !v.json, warner(stderr))
		if err != nil {
			return err
		}
		defer in.Close()
		if in.Spilled == nil {
			it := stream.Described(in.Iter)
			switch {
			case v.json:
				return dump.JSONStream(stdout, in.Meta, it, v.Options)
			case v.csv:
				return dump.CSVStream(stdout, in.Meta, it, v.Options)
			}
			return dump.DumpStream(stdout, in.Meta, it, v.Options)
		}
		a = in.Spilled
	}
	switch {
	case v.json:
		return dump.JSON(stdout, a, v.Options)
	case v.csv:
		return dump.CSV(stdout, a, v.Options)
	}
	return dump.Dump(stdout, a, v.Options)
}

// check runs the integrity checks on each archive; any warning or error
// makes the exit status 1.
func check(c *cli.Context, names []string, stdout, stderr io.Writer) error {
	if len(names) == 0 {
		return toolio.UsageError{Msg: "--check needs one or more archives"}
	}
	if c.Bool("z") && c.String("Z") != "" {
		return toolio.UsageError{Msg: "-z and -Z are mutually exclusive"}
	}
	bad := 0
	for _, n := range names {
		opts := format.CheckOptions{NoWrap: c.Bool("w")}
		if err := checkWindow(c, n, &opts, stderr); err != nil {
			return err
		}
		findings, err := format.Check(n, opts)
		if err != nil {
			return err
		}
		if err := format.FormatFindings(stdout, findings); err != nil {
			return err
		}
		if format.Flagged(findings) {
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("--check: %d of %d archives have problems", bad, len(names))
	}
	return nil
}

// checkWindow sets the clock of the messages (-z, -Z) and the window of
// records the checks look at (-S, -T), as pmlogcheck takes them: in PCP's
// time syntax, against the archive's own bounds.
func checkWindow(c *cli.Context, name string, opts *format.CheckOptions, stderr io.Writer) error {
	if !c.Bool("z") && c.String("Z") == "" && c.String("S") == "" && c.String("T") == "" {
		return nil
	}
	a, err := format.Open(name, format.WithWarn(func(error) {}))
	if err != nil {
		return err
	}
	lab := a.Label()
	loc, err := pcptime.ChooseZone(c.Bool("z"), c.String("Z"), lab.Timezone, lab.Zoneinfo)
	if err != nil {
		return toolio.UsageError{Msg: err.Error()}
	}
	opts.Location = loc
	if c.String("S") == "" && c.String("T") == "" {
		return nil
	}
	end, ok, err := a.End()
	if err != nil {
		return err
	}
	if !ok {
		end = lab.Start
	}
	w, err := pcptime.ParseWindow(c.String("S"), c.String("T"), "", "", lab.Start, end, loc)
	if err != nil {
		return toolio.UsageError{Msg: fmt.Sprintf("invalid time window: %v", err)}
	}
	if c.String("S") != "" {
		opts.Start = &w.Start
	}
	if c.String("T") != "" {
		opts.End = &w.End
	}
	return nil
}
