package scratch

import (
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary act as a tool (SCRATCH_CHILD set): it
// installs the handler, makes a recorded temporary file and directory in
// the directory named, says so on standard output, and waits for a
// signal; with SCRATCH_OWN, SIGTERM is left to it (HandledByTool), and
// it exits 7 on its own when SIGTERM comes.
func TestMain(m *testing.M) {
	dir := os.Getenv("SCRATCH_CHILD")
	if dir == "" {
		os.Exit(m.Run())
	}
	OnSignals()
	var own chan os.Signal
	if os.Getenv("SCRATCH_OWN") != "" {
		HandledByTool(syscall.SIGTERM)
		own = make(chan os.Signal, 1)
		notifyOwn(own)
	}
	f, err := CreateTemp(dir, ".out.tmp*")
	if err != nil {
		os.Exit(3)
	}
	if _, err := MkdirTemp(dir, "spill-"); err != nil {
		os.Exit(3)
	}
	kept := filepath.Join(dir, "kept")
	if err := os.WriteFile(kept, nil, 0o644); err != nil {
		os.Exit(3)
	}
	os.Stdout.WriteString("ready\n")
	select {
	case <-own:
		f.Close()
		RemoveAll(f.Name())
		Exit(7)
	case <-time.After(time.Minute):
		os.Exit(4)
	}
}

// child starts the test binary as a tool in dir and waits until it is
// ready.
func child(t *testing.T, dir string, own bool) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "SCRATCH_CHILD="+dir)
	if own {
		cmd.Env = append(cmd.Env, "SCRATCH_OWN=1")
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if n, err := out.Read(buf); err != nil || !strings.HasPrefix(string(buf[:n]), "ready") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child did not get ready: %q, %v", buf[:n], err)
	}
	return cmd
}

// TestSignalRemovesRecorded: each signal removes what was recorded, and
// only that, and the process dies of the signal.
func TestSignalRemovesRecorded(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE} {
		if signal.Ignored(sig) {
			// The child inherits it ignored (the tests run under
			// nohup, say), and a signal ignored at start stays
			// ignored, as it should: nothing to see here.
			t.Logf("%v: ignored by this process, so by the child too: not tried", sig)
			continue
		}
		dir := t.TempDir()
		cmd := child(t, dir, false)
		cmd.Process.Signal(sig)
		cmd.Wait()
		ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
		// SIGPIPE from another process is one the Go runtime ignores
		// once it is not notified: the handler then exits with the
		// status a shell shows for it (a write to a broken standard
		// output, the real case, still dies of it).
		died := ws.Signaled() && ws.Signal() == sig
		if !died && !(sig == syscall.SIGPIPE && ws.ExitStatus() == 128+int(sig)) {
			t.Errorf("%v: the child ended with %v, want death by the signal", sig, cmd.ProcessState)
		}
		left, _ := os.ReadDir(dir)
		if len(left) != 1 || left[0].Name() != "kept" {
			var names []string
			for _, e := range left {
				names = append(names, e.Name())
			}
			t.Errorf("%v: left %v, want only the file that was not recorded", sig, names)
		}
	}
}

// TestHandledByTool: a signal the tool keeps reaches it alone; the tool
// ends as it chooses, and Exit removes what it left recorded.
func TestHandledByTool(t *testing.T) {
	dir := t.TempDir()
	cmd := child(t, dir, true)
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 7 {
		t.Errorf("the child ended with %v, want its own exit 7", cmd.ProcessState)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 1 || left[0].Name() != "kept" {
		t.Errorf("left %d entries, want only the file that was not recorded", len(left))
	}
}

// TestHoldDelaysRemoval: a rename under Hold finishes before a signal's
// removal can run (the handler takes the same lock).
func TestHoldDelaysRemoval(t *testing.T) {
	dir := t.TempDir()
	f, err := CreateTemp(dir, ".x.tmp*")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	final := filepath.Join(dir, "x")
	done := make(chan struct{})
	err = Hold(func() error {
		go func() {
			mu.Lock() // as the handler does: it waits for Hold
			sweep()
			mu.Unlock()
			close(done)
		}()
		time.Sleep(20 * time.Millisecond)
		return os.Rename(f.Name(), final)
	})
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(final); err != nil {
		t.Errorf("the renamed output is gone: %v", err)
	}
	Forget(f.Name())
}

func notifyOwn(c chan os.Signal) { signal.Notify(c, syscall.SIGTERM) }
