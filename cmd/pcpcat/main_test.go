package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"pcpcat": func() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the command-line sessions in testdata/script: each file
// is a whole pcpcat session with its expected output.
func TestScripts(t *testing.T) {
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
