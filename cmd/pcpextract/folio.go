package main

import (
	"errors"
	"fmt"

	"github.com/pcptools/pcptools/folio"
	"github.com/pcptools/pcptools/internal/toolio"
)

// folio merges each host's archives among those args name into
// outDir/<host>/, jobs hosts at once, and writes outDir/Folio.
func (s *settings) folio(args []string, outDir string, jobs int) error {
	hosts, err := folio.Hosts(args, s.warn)
	if err != nil {
		return err
	}
	merge := func(h folio.Host, out string) (err error) {
		// An input cut short under its mapping fails this host only.
		toolio.GuardFaults()
		defer toolio.RecoverFault(&err)
		js := *s
		js.quiet = true
		js.warnPref = s.prog + ": " + h.Name
		return js.merge(job{inputs: h.Bases, out: out})
	}
	report := func(host string, err error) { fmt.Fprintf(s.stderr, "%s: host %s: %v\n", s.prog, host, err) }
	err = folio.EachHost(hosts, outDir, jobs, "pcpextract", merge, report)
	var f folio.Failed
	if errors.As(err, &f) {
		fmt.Fprintf(s.stderr, "%s: %v\n", s.prog, f)
		return toolio.Silent{Code: toolio.ExitFailed}
	}
	return err
}
