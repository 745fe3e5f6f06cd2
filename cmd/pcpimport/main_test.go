package main

import (
	"testing"

	"github.com/pcptools/pcptools/internal/scripttest"
)

func TestMain(m *testing.M) { scripttest.Main(m, "pcpimport", "pcpimport", run) }

// TestScripts runs the command-line sessions in testdata/script.
func TestScripts(t *testing.T) { scripttest.Scripts(t) }
