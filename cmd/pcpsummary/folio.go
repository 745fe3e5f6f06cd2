package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pcptools/pcptools/folio"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/summary"
)

// runFolio is pcpsummary --folio: one summary per host (summary.RunHosts).
func runFolio(prog string, cmd *summary.Command, stdout, stderr io.Writer) int {
	if cmd.Archive == "" {
		fmt.Fprintf(stderr, "%s: --folio: name the folios, directories or archives to summarise\n", prog)
		return toolio.ExitUsage
	}
	inputs, metrics := cmd.SplitInputs(exists)
	if len(inputs) == 0 {
		fmt.Fprintf(stderr, "%s: %s: no such folio, directory or archive\n", prog, cmd.Archive)
		return toolio.ExitFailed
	}
	warnFor := func(host string) func(error) {
		return func(err error) {
			if host != "" {
				fmt.Fprintf(stderr, "%s: host %s: warning: %v\n", prog, host, err)
			} else {
				fmt.Fprintf(stderr, "%s: warning: %v\n", prog, err)
			}
		}
	}
	hosts, err := folio.Hosts(inputs, warnFor(""))
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return toolio.ExitFailed
	}
	o := cmd.Options
	o.Metrics = metrics
	open := func(h folio.Host) (summary.Archive, error) {
		as, names, err := toolio.OpenArchives(h.Bases, warnFor(h.Name))
		if err != nil {
			return nil, err
		}
		return summary.Multi(names, as), nil
	}
	report := func(host string, err error) { fmt.Fprintf(stderr, "%s: host %s: %v\n", prog, host, err) }
	err = summary.RunHosts(stdout, hosts, o, 0, open, report)
	var f folio.Failed
	switch {
	case errors.As(err, &f):
		fmt.Fprintf(stderr, "%s: %v\n", prog, f)
		return toolio.ExitFailed
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return toolio.ExitFailed
	}
	return toolio.ExitOK
}

// exists reports whether name is a file or directory, or the base name of
// an archive (name.meta, possibly compressed).
func exists(name string) bool {
	if _, err := os.Stat(name); err == nil {
		return true
	}
	m, _ := filepath.Glob(globEscape(name) + ".meta*")
	return len(m) > 0
}

// globEscape quotes the characters filepath.Match treats specially.
func globEscape(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', '\\':
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return string(b)
}
