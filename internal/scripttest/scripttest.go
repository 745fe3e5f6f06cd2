// Package scripttest runs a command's command-line sessions
// (testdata/script/*.txtar, with rogpeppe/go-internal/testscript) the same
// way for every tool: the command under its own name and under its PCP
// name, $EXAMPLE naming the project's example archive, TZ=UTC.
package scripttest

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// RunFunc is a command's run: arguments (the first its name), standard
// streams, exit status.
type RunFunc func(args []string, stdin *os.File, stdout, stderr io.Writer) int

// Main is a command's TestMain: the scripts may run it as name and, unless
// pcpName is "", as pcpName (its PCP-name mode).
func Main(m *testing.M, name, pcpName string, run RunFunc) {
	cmds := map[string]func(){
		name: func() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
	}
	if pcpName != "" {
		cmds[pcpName] = func() {
			os.Exit(run(append([]string{pcpName}, os.Args[1:]...), os.Stdin, os.Stdout, os.Stderr))
		}
	}
	testscript.Main(m, cmds)
}

// Scripts runs the sessions in testdata/script of the command's directory
// (cmd/NAME, two levels below the repository's root).
func Scripts(t *testing.T) {
	example, err := filepath.Abs("../../testdata/example/demo")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLE", example)
			env.Setenv("TZ", "UTC")
			return nil
		},
	})
}
