// Package folio reads and writes PCP archive folios: the small text files
// mkaf, pmlogger and pmchart write to name a set of archives, possibly of
// several hosts, that belong together.
//
//	PCPFolio
//	Version: 1
//	# comment
//	Created: on HOST at DATE
//	Creator: TOOL [CONFIG]
//	Archive:        HOST            PATH
//
// The first two lines are fixed; blank lines and lines starting with '#'
// are ignored; paths are archive base names, relative paths relative to
// the folio's directory.
package folio

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Folio is a parsed folio.
type Folio struct {
	Created  string
	Creator  string
	Archives []Archive
}

// Archive is one archive of a folio.
type Archive struct {
	Host string
	Path string // as written in the folio
}

// Read reads the folio at path; relative archive paths are made relative to
// the folio's directory.
func Read(path string) (*Folio, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	for i := range f.Archives {
		if p := f.Archives[i].Path; !filepath.IsAbs(p) {
			f.Archives[i].Path = filepath.Join(dir, p)
		}
	}
	return f, nil
}

// IsFolio reports whether the file at path starts like a folio.
func IsFolio(path string) bool {
	fh, err := os.Open(path)
	if err != nil {
		return false
	}
	defer fh.Close()
	var b [9]byte
	n, _ := io.ReadFull(fh, b[:])
	return string(b[:n]) == "PCPFolio\n"
}

// Parse parses a folio; name is used in errors, which give the line.
func Parse(name string, r io.Reader) (*Folio, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	f := &Folio{}
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		switch line {
		case 1:
			if text != "PCPFolio" {
				return nil, fmt.Errorf("%s:1: not an archive folio (the first line must be PCPFolio)", name)
			}
			continue
		case 2:
			if strings.Join(strings.Fields(text), " ") != "Version: 1" {
				return nil, fmt.Errorf("%s:2: unsupported folio version %q (only \"Version: 1\" exists)", name, text)
			}
			continue
		}
		t := strings.TrimSpace(text)
		if t == "" || t[0] == '#' {
			continue
		}
		key, rest, ok := strings.Cut(t, ":")
		if !ok {
			return nil, fmt.Errorf("%s:%d: expected \"Key: value\", found %q", name, line, t)
		}
		rest = strings.TrimSpace(rest)
		switch key {
		case "Created":
			f.Created = rest
		case "Creator":
			f.Creator = rest
		case "Archive":
			fields := strings.Fields(rest)
			if len(fields) != 2 {
				return nil, fmt.Errorf("%s:%d: an Archive line takes a host and a path, found %q", name, line, rest)
			}
			f.Archives = append(f.Archives, Archive{Host: fields[0], Path: fields[1]})
		default:
			// Unknown keys are for other tools; pmafm ignores them too.
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if line < 2 {
		return nil, fmt.Errorf("%s: not an archive folio (too short)", name)
	}
	return f, nil
}

// Write writes f in mkaf's layout.
func Write(w io.Writer, f *Folio) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "PCPFolio\nVersion: 1\n# use pmafm(1) to process this PCP archive folio\n")
	if f.Created != "" {
		fmt.Fprintf(bw, "Created: %s\n", f.Created)
	}
	if f.Creator != "" {
		fmt.Fprintf(bw, "Creator: %s\n", f.Creator)
	}
	fmt.Fprintf(bw, "%-15s %-23s %s\n", "#", "Host", "Basename")
	for _, a := range f.Archives {
		if strings.ContainsAny(a.Host, " \t\n") || strings.ContainsAny(a.Path, " \t\n") {
			return fmt.Errorf("folio: host %q or path %q contains white space, which a folio cannot hold", a.Host, a.Path)
		}
		fmt.Fprintf(bw, "%-15s %-23s %s\n", "Archive:", a.Host, a.Path)
	}
	return bw.Flush()
}
