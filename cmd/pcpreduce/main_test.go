package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"pcpreduce":   func() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
		"pmlogreduce": func() { os.Exit(run(append([]string{"pmlogreduce"}, os.Args[1:]...), os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the command-line sessions in testdata/script.
func TestScripts(t *testing.T) {
	ex, err := filepath.Abs("../../testdata/example/demo")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLE", ex)
			env.Setenv("TZ", "UTC")
			return nil
		},
	})
}
