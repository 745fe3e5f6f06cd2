package main

import (
	"errors"
	"fmt"

	"github.com/pcptools/pcptools/extract"
	"github.com/pcptools/pcptools/folio"
	"github.com/pcptools/pcptools/internal/toolio"
)

// folio merges each host's archives among those args name into
// outDir/<host>/, jobs hosts at once, and writes outDir/Folio.
func folioMerge(s *extract.Settings, args []string, outDir string, jobs int) error {
	hosts, err := folio.Hosts(args, s.Warn)
	if err != nil {
		return err
	}
	merge := func(h folio.Host, out string) (err error) {
		// An input cut short under its mapping fails this host only.
		toolio.GuardFaults()
		defer toolio.RecoverFault(&err)
		js := *s
		js.Quiet = true
		js.WarnPrefix = s.Prog + ": " + h.Name
		return js.Merge(extract.Job{Inputs: h.Bases, Out: out})
	}
	report := func(host string, err error) { fmt.Fprintf(s.Stderr, "%s: host %s: %v\n", s.Prog, host, err) }
	err = folio.EachHost(hosts, outDir, jobs, "pcpextract", merge, report)
	var f folio.Failed
	if errors.As(err, &f) {
		fmt.Fprintf(s.Stderr, "%s: %v\n", s.Prog, f)
		return toolio.Silent{Code: toolio.ExitFailed}
	}
	return err
}
