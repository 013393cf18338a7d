package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// startGroup starts explore as a process of its own process group, as a
// shell starts a job (Ctrl-C signals the whole group: explore and the
// servers it started), with TMPDIR a folder of the test's own, so that
// what the run leaves there can be counted.
func startGroup(t *testing.T, tmp string, args ...string) (*exec.Cmd, *strings.Builder, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LOCKCHECK_EXPLORE_MAIN=1", "TMPDIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out strings.Builder
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	lines := make(chan string, 1000)
	go func() {
		buf := make([]byte, 4096)
		var acc strings.Builder
		for {
			n, err := stderr.Read(buf)
			acc.Write(buf[:n])
			for {
				s := acc.String()
				i := strings.IndexByte(s, '\n')
				if i < 0 {
					break
				}
				lines <- s[:i]
				acc.Reset()
				acc.WriteString(s[i+1:])
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	return cmd, &out, lines
}

// signalGroup sends sig to the process group and returns the exit code
// and every stderr line after the signal.
func signalGroup(t *testing.T, cmd *exec.Cmd, lines <-chan string, sig syscall.Signal) (int, string) {
	t.Helper()
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, sig))
	var rest []string
	for l := range lines {
		rest = append(rest, l)
	}
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		require.False(t, ee.Exited() == false, "killed by the signal instead of stopping: %v", err)
	} else {
		require.NoError(t, err)
	}
	return code, strings.Join(rest, "\n")
}

func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestSignalsStopSearches: fix and regen, stopped by a signal in their
// searches, say so and exit 3; regen has written nothing.
func TestSignalsStopSearches(t *testing.T) {
	tmp := t.TempDir()
	cmd, out, lines := startGroup(t, tmp, "fix", "-design", "demo2", "-all")
	waitFor(t, lines, "explore fix: 1 change(s) away")
	code, errs := signalGroup(t, cmd, lines, syscall.SIGINT)
	require.Equal(t, exitIncomplete, code, errs)
	require.Regexp(t, `explore fix: stopped by SIGINT: \d+ of \d+ neighbours 1 change\(s\) away searched; no fix decided`, errs)
	require.Empty(t, out.String())

	dir := filepath.Join(tmp, "cx")
	require.NoError(t, os.Mkdir(dir, 0o755))
	cmd, out, lines = startGroup(t, tmp, "regen", "-dir", dir)
	time.Sleep(time.Second)
	code, errs = signalGroup(t, cmd, lines, syscall.SIGTERM)
	require.Equal(t, exitIncomplete, code, errs)
	require.Regexp(t, `explore regen: stopped by SIGTERM: at catalogue design \d+ of \d+ \([^)]*\), nothing written`, errs)
	require.Empty(t, out.String())
	require.Empty(t, leftovers(t, dir))
}
