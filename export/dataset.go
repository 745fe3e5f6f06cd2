package export

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/folio"
	"github.com/pcptools/pcptools/format"
)

// DatasetOptions are the choices of Dataset.
type DatasetOptions struct {
	Jobs  int          // hosts at once; 0: one per CPU
	Force bool         // redo files whose source has not changed
	Rates bool         // counters as rates (ParquetRates)
	Dump  dump.Options // window, metrics (zones do not apply)
	Warn  func(error)
	// Report is told of each host that fails; the others go on.
	Report func(host string, err error)
	// Done is told of each archive exported (skipped: unchanged).
	Done func(out string, rows int64, skipped bool)
}

// sourceKey is the file metadata key that records what a file was made
// from, so that a second run can skip it.
const sourceKey = "pcp.source"

// Dataset exports the archives that args name (folios, directories of
// archives at any depth, archives) to a Hive-partitioned dataset under
// dir: dir/host=H/date=YYYY-MM-DD/BASE.parquet, the date being the UTC day
// the archive starts on. Hosts are exported in parallel; within a host
// archives go one after the other. A file whose archive has not changed
// since it was made (same files, sizes and modification times) is not
// redone. A host that fails is reported and does not stop the others; the
// error is then a folio.Failed.
func Dataset(dir string, args []string, o DatasetOptions) error {
	warn := o.Warn
	if warn == nil {
		warn = func(error) {}
	}
	hosts, err := folio.Hosts(args, warn)
	if err != nil {
		return err
	}
	if len(hosts) == 0 {
		return fmt.Errorf("no archives to export")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	// The cores are shared between the hosts exported at once: each
	// file gets the encoders (and the memory of rows in flight, see
	// writeRowGroups) of its share.
	enc := max(runtime.GOMAXPROCS(0)/min(jobs, len(hosts)), 1)
	if encoders > 0 {
		enc = encoders
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed int
		sem    = make(chan struct{}, jobs)
	)
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := exportHost(dir, h, o, enc, warn, &mu); err != nil {
				mu.Lock()
				defer mu.Unlock()
				failed++
				if o.Report != nil {
					o.Report(h.Name, err)
				}
			}
		}()
	}
	wg.Wait()
	if failed > 0 {
		return folio.Failed{Failed: failed, Total: len(hosts)}
	}
	return nil
}

func exportHost(dir string, h folio.Host, o DatasetOptions, enc int, warn func(error), mu *sync.Mutex) error {
	for _, base := range h.Bases {
		a, err := format.Open(base, format.WithWarn(warn))
		if err != nil {
			return err
		}
		day := a.Label().Start.Time().UTC().Format(time.DateOnly)
		pdir := filepath.Join(dir, "host="+h.Name, "date="+day)
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return err
		}
		out := filepath.Join(pdir, filepath.Base(base)+".parquet")
		sig, err := sourceSignature(base)
		if err != nil {
			return err
		}
		if o.Rates {
			sig += " (counters as rates)" // a file made the other way is redone
		}
		if !o.Force && madeFrom(out) == sig {
			if o.Done != nil {
				mu.Lock()
				o.Done(out, 0, true)
				mu.Unlock()
			}
			continue
		}
		src, err := FromArchive(a)
		if err != nil {
			return err
		}
		rows, err := writeParquet(out, src, o.Dump, enc, o.Rates, [][2]string{{sourceKey, sig}})
		if err != nil {
			return err
		}
		if o.Done != nil {
			mu.Lock()
			o.Done(out, rows, false)
			mu.Unlock()
		}
	}
	return nil
}

// archiveFile matches what follows "BASE." in the name of an archive's
// files: meta, index or a volume number, maybe compressed.
var archiveFile = regexp.MustCompile(`^(meta|index|[0-9]+)(\.[a-z0-9]+)?$`)

// sourceSignature names an archive's files with their sizes and
// modification times.
func sourceSignature(base string) (string, error) {
	ents, err := os.ReadDir(filepath.Dir(base))
	if err != nil {
		return "", err
	}
	prefix := filepath.Base(base) + "."
	var parts []string
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, prefix) || !archiveFile.MatchString(n[len(prefix):]) {
			continue
		}
		st, err := e.Info()
		if err != nil {
			return "", err
		}
		parts = append(parts, fmt.Sprintf("%s:%d:%d", n, st.Size(), st.ModTime().UnixNano()))
	}
	sort.Strings(parts)
	abs, err := filepath.Abs(base)
	if err != nil {
		abs = base
	}
	return abs + " " + strings.Join(parts, " "), nil
}

// madeFrom returns the source signature recorded in an existing Parquet
// file, or "" when there is none (no file, or not ours).
func madeFrom(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return ""
	}
	v, _ := pf.Lookup(sourceKey)
	return v
}
