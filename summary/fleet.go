package summary

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/pcptools/pcptools/folio"
)

// Folios (pcpsummary --folio): the archives named are grouped by the host
// in their labels (folio.Hosts); each host's archives are summarised as
// one multi-archive context, as pmlogsummary summarises a directory of
// them, several hosts at once; the summaries come out in the order of the
// hosts' names, each as soon as it and those before it are done.
//
// Each host's text summary follows a line "host NAME:" and ends with an
// empty line. With --json every object starts with "host":"NAME"; with
// --csv there is one header, its first column "host". With Fleet, the
// roll-up over the hosts (rollup.go) follows.

// RunHosts summarises each of hosts (opened by open) with o, jobs at once
// (0: one per CPU), and writes the summaries to w in host order. A host
// that fails is reported (report) and does not stop the others; the
// error is then a folio.Failed.
func RunHosts(w io.Writer, hosts []folio.Host, o Options, jobs int, open func(folio.Host) (Archive, error), report func(host string, err error)) error {
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	type result struct {
		out   bytes.Buffer
		err   error
		done  chan struct{}
		stats []hostStat // for the roll-up (Options.Fleet)
	}
	res := make([]*result, len(hosts))
	for i := range res {
		res[i] = &result{done: make(chan struct{})}
	}
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(res[i].done)
			sem <- struct{}{}
			defer func() { <-sem }()
			ho := o
			ho.Host, ho.HostColumn = h.Name, true
			if ho.Prog == "" {
				ho.Prog = "pcpsummary"
			}
			// the summary's warnings name the host they are about
			// (hosts run at once). Prog also tells pmlogsummary's
			// behaviour from ours; folios are ours alone, so a host's
			// Prog is never "pmlogsummary".
			ho.Prog += ": host " + h.Name
			ho.NoCSVHeader = i > 0 || ho.NoCSVHeader
			if ho.Workers == 0 && len(hosts) > 1 {
				// the cores are shared between the hosts first
				ho.Workers = max(1, runtime.GOMAXPROCS(0)/min(jobs, len(hosts)))
			}
			r := res[i]
			if o.Fleet {
				ho.OnStat = func(st *Stat) {
					if h, ok := keep(st); ok {
						r.stats = append(r.stats, h)
					}
				}
			}
			a, err := open(h)
			if err == nil {
				if !o.JSON && !o.CSV {
					fmt.Fprintf(&r.out, "host %s:\n", h.Name)
				}
				err = Run(&r.out, a, ho)
				if !o.JSON && !o.CSV {
					r.out.WriteByte('\n')
				}
				if c, ok := a.(io.Closer); ok {
					c.Close()
				}
			}
			r.err = err
		}()
	}
	failed := 0
	var werr error
	var roll rollup
	for i, h := range hosts {
		r := res[i]
		<-r.done
		if r.err == nil {
			roll.add(h.Name, r.stats)
		}
		r.stats = nil
		if r.err != nil {
			failed++
			report(h.Name, r.err)
			if !o.CSV || i > 0 {
				continue
			}
			// The first host's header is everyone's.
			r.out.Reset()
			r.out.Write(appendCSVHeaderFor(nil, &o, true))
		}
		if werr == nil {
			_, werr = w.Write(r.out.Bytes())
		}
		r.out = bytes.Buffer{}
	}
	wg.Wait()
	if o.Fleet && werr == nil {
		_, werr = w.Write(roll.print(nil, &o, len(hosts)))
	}
	if werr != nil {
		return werr
	}
	if failed > 0 {
		return folio.Failed{Failed: failed, Total: len(hosts)}
	}
	return nil
}
