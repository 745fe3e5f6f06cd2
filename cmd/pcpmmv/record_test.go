package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDuration: -t and -T take Go's durations and pmlogger's intervals;
// "10ms" stays Go's milliseconds.
func TestDuration(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"":        0,
		"10ms":    10 * time.Millisecond,
		"1m30s":   90 * time.Second,
		"10msec":  10 * time.Millisecond,
		"2sec":    2 * time.Second,
		"2min":    2 * time.Minute,
		"1 hour":  time.Hour,
		"30":      30 * time.Second,
		"1.5hr":   90 * time.Minute,
		"500usec": 500 * time.Microsecond,
	} {
		got, err := duration(s)
		if err != nil || got != want {
			t.Errorf("duration(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"x", "0", "-1s", "1 fortnight"} {
		if _, err := duration(s); err == nil {
			t.Errorf("duration(%q): no error", s)
		}
	}
}

// TestRecordMissingPath: a path that is not there at the start is an
// error, before any output is made, not a recording of nothing with a
// warning at every sample.
func TestRecordMissingPath(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := run([]string{"pcpmmv", "record", "-t", "10ms", "-s", "3", filepath.Join(dir, "no-such-file"), "-o", out}, nil, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "no-such-file: no such file or directory") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	if m, _ := filepath.Glob(out + "*"); len(m) > 0 {
		t.Errorf("output made: %v", m)
	}
}
