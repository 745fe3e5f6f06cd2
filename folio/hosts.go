package folio

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/format/compress"
	"github.com/pcptools/pcptools/internal/scratch"
)

// Host is one host's archives, by base name, in the order of their labels'
// start times.
type Host struct {
	Name  string
	Bases []string
}

// Hosts finds the archives that args name (folios, directories of
// archives at any depth as pmlogger_farm lays them out, or archives) and
// groups them by the host in their labels. An archive named twice is
// taken once. Hosts come sorted by name.
func Hosts(args []string, warn func(error)) ([]Host, error) {
	type found struct {
		base  string
		start time.Time
	}
	byHost := map[string][]found{}
	seen := map[string]bool{}
	add := func(base string) error {
		a, err := format.Open(base, format.WithWarn(warn))
		if err != nil {
			return err
		}
		if seen[a.Base()] {
			return nil
		}
		seen[a.Base()] = true
		l := a.Label()
		byHost[l.Hostname] = append(byHost[l.Hostname], found{a.Base(), l.Start.Time()})
		return nil
	}
	for _, arg := range args {
		st, err := os.Stat(arg)
		switch {
		case err == nil && st.IsDir():
			bases, err := archivesUnder(arg)
			if err != nil {
				return nil, err
			}
			if len(bases) == 0 {
				return nil, fmt.Errorf("%s: no archives in this directory or below it", arg)
			}
			for _, b := range bases {
				if err := add(b); err != nil {
					return nil, err
				}
			}
		case err == nil && IsFolio(arg):
			f, err := Read(arg)
			if err != nil {
				return nil, err
			}
			for _, a := range f.Archives {
				if err := add(a.Path); err != nil {
					return nil, fmt.Errorf("%s: %w", arg, err)
				}
			}
		default:
			if err := add(arg); err != nil {
				return nil, err
			}
		}
	}
	hosts := make([]Host, 0, len(byHost))
	for h, fs := range byHost {
		if h == "" || h == "." || h == ".." || strings.ContainsAny(h, "/\x00") {
			return nil, fmt.Errorf("host name %q cannot name a directory", h)
		}
		slices.SortStableFunc(fs, func(a, b found) int { return a.start.Compare(b.start) })
		host := Host{Name: h}
		for _, f := range fs {
			host.Bases = append(host.Bases, f.base)
		}
		hosts = append(hosts, host)
	}
	sort.Slice(hosts, func(i, j int) bool { return hosts[i].Name < hosts[j].Name })
	return hosts, nil
}

// Failed reports that some hosts of a folio's work failed; each was
// reported as it failed.
type Failed struct{ Failed, Total int }

func (e Failed) Error() string { return fmt.Sprintf("%d of %d hosts failed", e.Failed, e.Total) }

// EachHost runs work for every host, at most jobs at once (0: one per
// CPU), with the output OUT/<host>/<name of the host's first archive>, and
// then writes OUT/Folio naming the outputs of the hosts that succeeded,
// made by creator. A host that fails is reported (report) and does not
// stop the others; the error is then a Failed.
func EachHost(hosts []Host, outDir string, jobs int, creator string, work func(h Host, out string) error, report func(host string, err error)) error {
	return EachHostInto(hosts, []string{outDir}, jobs, creator,
		func(h Host, outs []string) error { return work(h, outs[0]) }, report)
}

// EachHostInto is EachHost writing one output per host into each of
// outDirs, a folio each: work gets the host's output in every directory,
// in outDirs' order (DIR/<host>/<name of the host's first archive>), and
// each DIR/Folio names the outputs there (a tool writing several
// resolutions of each host in one pass).
func EachHostInto(hosts []Host, outDirs []string, jobs int, creator string, work func(h Host, outs []string) error, report func(host string, err error)) error {
	for _, d := range outDirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	outs := make([][]string, len(hosts))
	errs := make([]error, len(hosts))
	var wg sync.WaitGroup
	var mu sync.Mutex
	sem := make(chan struct{}, jobs)
	for i, h := range hosts {
		for _, d := range outDirs {
			outs[i] = append(outs[i], filepath.Join(d, h.Name, filepath.Base(h.Bases[0])))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			var err error
			for _, o := range outs[i] {
				if err == nil {
					err = os.MkdirAll(filepath.Dir(o), 0o755)
				}
			}
			if err == nil {
				err = work(h, outs[i])
			}
			if err != nil {
				mu.Lock()
				defer mu.Unlock()
				errs[i] = err
				report(h.Name, err)
			}
		}()
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	for j, d := range outDirs {
		f := &Folio{Created: fmt.Sprintf("on %s at %s", hostname(), time.Now().Format(time.UnixDate)), Creator: creator}
		for i, h := range hosts {
			if errs[i] != nil {
				continue
			}
			abs, err := filepath.Abs(outs[i][j])
			if err != nil {
				abs = outs[i][j]
			}
			f.Archives = append(f.Archives, Archive{Host: h.Name, Path: abs})
		}
		if len(f.Archives) > 0 {
			if err := writeFile(filepath.Join(d, "Folio"), f); err != nil {
				return err
			}
		}
	}
	if failed > 0 {
		return Failed{failed, len(hosts)}
	}
	return nil
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "localhost"
	}
	return h
}

// writeFile writes a folio through a temporary file and a rename.
func writeFile(path string, f *Folio) error {
	tmp, err := scratch.CreateTemp(filepath.Dir(path), ".Folio.tmp*")
	if err != nil {
		return err
	}
	if err := Write(tmp, f); err != nil {
		tmp.Close()
		scratch.RemoveAll(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		scratch.RemoveAll(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// archivesUnder finds every archive (a .meta file, maybe compressed) in dir
// and below it.
func archivesUnder(dir string) ([]string, error) {
	var bases []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		name, _ := compress.SplitSuffix(d.Name())
		if base, ok := strings.CutSuffix(name, ".meta"); ok && base != "" {
			bases = append(bases, filepath.Join(filepath.Dir(path), base))
		}
		return nil
	})
	sort.Strings(bases)
	return bases, err
}
