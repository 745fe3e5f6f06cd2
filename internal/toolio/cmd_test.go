package toolio

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

type fakeFault struct{}

func (fakeFault) Error() string { return "unexpected fault address" }
func (fakeFault) Addr() uintptr { return 0x1000 }
func (fakeFault) RuntimeError() {}

func TestCatchPanic(t *testing.T) {
	run := func(v any) (string, int) {
		var buf bytes.Buffer
		status := ExitOK
		func() {
			defer CatchPanic("tool", &buf, &status)
			panic(v)
		}()
		return buf.String(), status
	}
	if msg, st := run(fakeFault{}); st != ExitFailed || !strings.Contains(msg, "tool: an input file was cut short") || !strings.Contains(msg, "0x1000") {
		t.Errorf("fault: status %d, %q", st, msg)
	}
	if msg, st := run(errors.New("boom")); st != ExitInternal || !strings.Contains(msg, "tool: internal error: boom") {
		t.Errorf("panic: status %d, %q", st, msg)
	}
}
