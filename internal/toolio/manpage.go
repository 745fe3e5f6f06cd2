package toolio

import (
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// manPage is app's man page (section 1) in roff, from the definitions
// --help shows: the name and what the tool does, the usage lines, and
// each visible option with its value's name and its description.
//
// It is ours rather than the CLI library's ToMan so that the tools can be
// built without the library's documentation code (the build tag
// urfave_cli_no_docs, see the Makefile): that code brings a markdown
// library whose package initialisation alone made every run of every
// tool 0.3 MiB larger (docs/benchmarks.md).
func manPage(app *cli.App) string {
	var b strings.Builder
	name := app.Name
	fmt.Fprintf(&b, ".TH %s 1\n.SH NAME\n%s \\- %s\n", strings.ToUpper(strings.Fields(name)[0]), name, roffEscape(app.Usage))
	b.WriteString(".SH SYNOPSIS\n.nf\n")
	usage := strings.TrimRight(app.UsageText, "\n")
	if usage == "" {
		usage = name + " [options] [arguments]"
	}
	for _, l := range strings.Split(usage, "\n") {
		b.WriteString(roffEscape(strings.TrimSpace(l)) + "\n")
	}
	b.WriteString(".fi\n")
	if d := strings.TrimSpace(app.Description); d != "" {
		b.WriteString(".SH DESCRIPTION\n")
		for _, para := range strings.Split(d, "\n\n") {
			b.WriteString(".PP\n")
			for _, l := range strings.Split(para, "\n") {
				b.WriteString(roffEscape(strings.TrimSpace(l)) + "\n")
			}
		}
	}
	flags := app.VisibleFlags()
	if len(flags) > 0 {
		b.WriteString(".SH OPTIONS\n")
	}
	type entry struct{ key, text string }
	var entries []entry
	for _, f := range flags {
		names := append([]string(nil), f.Names()...)
		// Short names first, as in --help.
		sort.SliceStable(names, func(i, j int) bool { return len(names[i]) == 1 && len(names[j]) > 1 })
		var heads []string
		for _, n := range names {
			if len(n) == 1 {
				heads = append(heads, `\fB\-`+roffWord(n)+`\fR`)
			} else {
				heads = append(heads, `\fB\-\-`+roffWord(n)+`\fR`)
			}
		}
		head := strings.Join(heads, ", ")
		text := ""
		if df, ok := f.(cli.DocGenerationFlag); ok {
			placeholder, u := unquoteUsage(df.GetUsage())
			// (the value's name, which Flags puts before the text for
			// --help, stands after the option here)
			text = strings.TrimPrefix(u, "("+placeholder+") ")
			if df.TakesValue() {
				if placeholder == "" {
					placeholder = "value"
				}
				head += ` \fI` + roffWord(placeholder) + `\fR`
			}
		}
		entries = append(entries, entry{strings.ToLower(strings.TrimLeft(names[0], "-")), ".TP\n" + head + "\n" + roffEscape(text) + "\n"})
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].key < entries[j].key })
	for _, e := range entries {
		b.WriteString(e.text)
	}
	return b.String()
}

// roffWord escapes a word set inside a font change: backslashes and
// hyphens (which roff would otherwise break or render as hyphens).
func roffWord(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	return strings.ReplaceAll(s, "-", `\-`)
}

// unquoteUsage splits a usage text into the name of the option's value,
// written in back quotes as --help reads it, and the text without them.
func unquoteUsage(usage string) (string, string) {
	i := strings.IndexByte(usage, '`')
	if i < 0 {
		return "", usage
	}
	j := strings.IndexByte(usage[i+1:], '`')
	if j < 0 {
		return "", usage
	}
	name := usage[i+1 : i+1+j]
	return name, usage[:i] + name + usage[i+1+j+1:]
}
