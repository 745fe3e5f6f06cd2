package rewrite

import (
	"embed"
	"io/fs"
	"sort"

	"github.com/pcptools/pcptools/rules"
)

// The standard redaction rules (pcprewrite --redact, pmlogredact): one
// file per concern, in PCP 6.1's pmlogrewrite grammar.
//
//go:embed redact/network redact/usernames
var redactFS embed.FS

// StandardRedaction returns the standard redaction rules: the network
// set, then the usernames set (pmlogredact reads its rule directory; we
// read its files in this fixed order).
func StandardRedaction() (*rules.Config, error) {
	names, err := fs.Glob(redactFS, "redact/*")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	cfg := &rules.Config{}
	for _, n := range names {
		src, err := redactFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		c, err := rules.ParsePmlogrewrite61("(standard redaction rules) "+n, string(src))
		if err != nil {
			return nil, err
		}
		cfg.Append(c)
	}
	return cfg, nil
}
