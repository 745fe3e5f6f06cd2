package toolio

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"
)

// GenerateEnv names the environment variable with which `make install`
// has a tool print its man page or a shell's completion script instead of
// running ("man", "bash", "zsh" or "fish"): they come from the same
// option definitions as --help, so they cannot disagree with it.
const GenerateEnv = "PCPTOOLS_GENERATE"

// generate writes what GenerateEnv asks for of app.
func generate(app *cli.App, what string, w io.Writer) error {
	cmd := strings.Fields(app.Name)[0] // "pcpmmv record" completes as pcpmmv
	var words []string
	for _, f := range app.Flags {
		for _, n := range f.Names() {
			if len(n) == 1 {
				words = append(words, "-"+n)
			} else {
				words = append(words, "--"+n)
			}
		}
	}
	sort.Strings(words)
	switch what {
	case "man":
		_, err := io.WriteString(w, manPage(app))
		return err
	case "fish":
		s, err := app.ToFishCompletion()
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, s)
		return err
	case "bash":
		// Options, then file names (archives are files).
		_, err := fmt.Fprintf(w, "# bash completion for %s (generated)\ncomplete -o default -o bashdefault -W '%s' %s\n",
			cmd, strings.Join(words, " "), cmd)
		return err
	case "zsh":
		var b strings.Builder
		fmt.Fprintf(&b, "#compdef %s\n# zsh completion for %s (generated)\n_arguments -s", cmd, cmd)
		for _, word := range words {
			fmt.Fprintf(&b, " '%s'", word)
		}
		b.WriteString(" '*:file:_files'\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	return fmt.Errorf("%s=%q: give man, bash, zsh or fish", GenerateEnv, what)
}

// usageWord is compiled when first used, not at every tool's start: a
// regexp compiled in an init function touches the regexp packages' code
// in every run.
var usageWord = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[\s\[,|])(--?[A-Za-z?][\w-]*)`)
})

// GenerateFromUsage is GenerateEnv's work for a tool whose command line is
// described by its usage text rather than an App (pcpsummary, which takes
// pmlogsummary's; pcpmmv, made of commands): the man page shows that text,
// and completion offers the options it names. It reports whether GenerateEnv
// was set, and so whether the tool should stop.
func GenerateFromUsage(name, about, usage string, w io.Writer) (bool, error) {
	what := os.Getenv(GenerateEnv)
	if what == "" {
		return false, nil
	}
	seen := map[string]bool{}
	var words []string
	for _, m := range usageWord().FindAllStringSubmatch(usage, -1) {
		cluster := !strings.HasPrefix(m[1], "--") && len(m[1]) > 2 // "-blmMy": letters, not an option
		if !seen[m[1]] && m[1] != "-?" && !cluster {
			seen[m[1]] = true
			words = append(words, m[1])
		}
	}
	sort.Strings(words)
	switch what {
	case "man":
		var b strings.Builder
		fmt.Fprintf(&b, ".TH %s 1\n.SH NAME\n%s \\- %s\n.SH SYNOPSIS\n.nf\n", name, name, roffEscape(about))
		for _, l := range strings.Split(strings.TrimRight(usage, "\n"), "\n") {
			b.WriteString(roffEscape(l) + "\n")
		}
		b.WriteString(".fi\n")
		_, err := io.WriteString(w, b.String())
		return true, err
	case "fish":
		var b strings.Builder
		for _, word := range words {
			if strings.HasPrefix(word, "--") {
				fmt.Fprintf(&b, "complete -c %s -l %s\n", name, word[2:])
			} else {
				fmt.Fprintf(&b, "complete -c %s -s %s\n", name, word[1:])
			}
		}
		_, err := io.WriteString(w, b.String())
		return true, err
	}
	app := &cli.App{Name: name}
	for _, word := range words {
		app.Flags = append(app.Flags, &cli.BoolFlag{Name: strings.TrimLeft(word, "-")})
	}
	return true, generate(app, what, w)
}

// roffEscape keeps a line of text literal in roff: backslashes doubled,
// and a line that starts with a dot or a quote protected.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// StatusOf is the exit status of a run that ended with err (nil: ExitOK),
// saying what err is on stderr.
func StatusOf(err error, prog string, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(stderr, "%s: %v\n", prog, err)
	return ExitFailed
}
