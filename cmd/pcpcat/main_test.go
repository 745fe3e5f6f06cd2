package main

import (
	"testing"

	"github.com/pcptools/pcptools/internal/scripttest"
)

func TestMain(m *testing.M) { scripttest.Main(m, "pcpcat", "pmdumplog", run) }

// TestScripts runs the command-line sessions in testdata/script: each file
// is a whole pcpcat session with its expected output.
func TestScripts(t *testing.T) { scripttest.Scripts(t) }
