package main

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

	"github.com/pcptools/pcptools/folio"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/format/compress"
	"github.com/pcptools/pcptools/internal/toolio"
)

// folioFailed reports that some hosts of a folio merge failed (each was
// reported as it failed).
type folioFailed struct{ failed, total int }

func (e folioFailed) Error() string {
	return fmt.Sprintf("%d of %d hosts failed", e.failed, e.total)
}

type hostArchive struct {
	base  string
	start time.Time
}

// folio merges the archives named by folios and directories, one output
// archive per host under outDir, several hosts at once, and writes a folio
// of the outputs.
func (s *settings) folio(args []string, outDir string, jobs int) error {
	hosts := map[string][]hostArchive{}
	seen := map[string]bool{}
	add := func(base string) error {
		a, err := format.Open(base, format.WithWarn(s.warn))
		if err != nil {
			return err
		}
		if seen[a.Base()] {
			return nil
		}
		seen[a.Base()] = true
		l := a.Label()
		hosts[l.Hostname] = append(hosts[l.Hostname], hostArchive{a.Base(), l.Start.Time()})
		return nil
	}
	for _, arg := range args {
		st, err := os.Stat(arg)
		switch {
		case err == nil && st.IsDir():
			bases, err := archivesUnder(arg)
			if err != nil {
				return err
			}
			if len(bases) == 0 {
				return fmt.Errorf("%s: no archives in this directory or below it", arg)
			}
			for _, b := range bases {
				if err := add(b); err != nil {
					return err
				}
			}
		case err == nil && folio.IsFolio(arg):
			f, err := folio.Read(arg)
			if err != nil {
				return err
			}
			for _, a := range f.Archives {
				if err := add(a.Path); err != nil {
					return fmt.Errorf("%s: %w", arg, err)
				}
			}
		default:
			if err := add(arg); err != nil {
				return err
			}
		}
	}
	names := make([]string, 0, len(hosts))
	for h := range hosts {
		if h == "" || h == "." || h == ".." || strings.ContainsAny(h, "/\x00") {
			return fmt.Errorf("host name %q cannot name a directory", h)
		}
		names = append(names, h)
	}
	sort.Strings(names)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	type result struct {
		host, out string
		err       error
	}
	results := make([]result, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, jobs)
	var mu sync.Mutex
	for i, h := range names {
		as := hosts[h]
		slices.SortStableFunc(as, func(a, b hostArchive) int { return a.start.Compare(b.start) })
		out := filepath.Join(outDir, h, filepath.Base(as[0].base))
		results[i] = result{host: h, out: out}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			// An input cut short under its mapping fails this host only.
			toolio.GuardFaults()
			defer func() {
				if r := recover(); r != nil {
					err := toolio.AsFault(r)
					if err == nil {
						panic(r)
					}
					mu.Lock()
					defer mu.Unlock()
					results[i].err = err
					fmt.Fprintf(s.stderr, "%s: host %s: %v\n", s.prog, h, err)
				}
			}()
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				results[i].err = err
				return
			}
			js := *s
			js.quiet = true
			js.warnPref = s.prog + ": " + h
			var inputs []string
			for _, a := range as {
				inputs = append(inputs, a.base)
			}
			err := js.merge(job{inputs: inputs, out: out})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				results[i].err = err
				fmt.Fprintf(s.stderr, "%s: host %s: %v\n", s.prog, h, err)
			}
		}()
	}
	wg.Wait()
	f := &folio.Folio{Created: fmt.Sprintf("on %s at %s", hostname(), time.Now().Format(time.UnixDate)), Creator: "pcpextract"}
	failed := 0
	for _, r := range results {
		if r.err != nil {
			failed++
			continue
		}
		abs, err := filepath.Abs(r.out)
		if err != nil {
			abs = r.out
		}
		f.Archives = append(f.Archives, folio.Archive{Host: r.host, Path: abs})
	}
	if len(f.Archives) > 0 {
		if err := writeFolio(filepath.Join(outDir, "Folio"), f); err != nil {
			return err
		}
	}
	if failed > 0 {
		fmt.Fprintf(s.stderr, "%s: %d of %d hosts failed\n", s.prog, failed, len(names))
		return folioFailed{failed, len(names)}
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

// writeFolio writes a folio through a temporary file and a rename.
func writeFolio(path string, f *folio.Folio) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".Folio.tmp*")
	if err != nil {
		return err
	}
	if err := folio.Write(tmp, f); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// archivesUnder finds every archive (a .meta file, maybe compressed) in dir
// and below it, as pmlogger_farm lays them out: a folder per host.
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
