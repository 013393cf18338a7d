package main

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"lockcheck/explore"
)

// ckDesign has about 200 levels, and a checkpoint at each takes most of
// its search's time: kills fall in the middle of writes.
const ckDesign = "redlock/cad/none/plain"

// Bad checkpoint flags are one-line errors, exit 2.
func TestCheckCheckpointFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-checkpoint", ""}, "explore check: -checkpoint: empty (want a folder)\n"},
		{[]string{"-resume", ""}, "explore check: -resume: empty (want the folder of a checkpoint)\n"},
		{[]string{"-resume", filepath.Join(dir, "none")}, "explore check: -resume " + filepath.Join(dir, "none") + ": not a folder\n"},
		{[]string{"-resume", dir}, "explore check: -resume " + dir + ": no checkpoint (checkpoint.lockcheck) in the folder\n"},
		{[]string{"-checkpoint-every", "1s"}, "explore check: -checkpoint-every 1s: only with -checkpoint or -resume\n"},
		{[]string{"-checkpoint", dir, "-checkpoint-every", "-1s"}, "explore check: -checkpoint-every -1s: want 0 (only on a signal) or more\n"},
	} {
		code, out, errs := runCheckArgs(append([]string{"-design", "demo2"}, c.args...)...)
		require.Equal(t, exitUsage, code, c.args)
		require.Equal(t, "", out)
		require.Equal(t, c.want, errs, c.args)
	}
	// a checkpoint of another design, or other bounds
	code, _, _ := runCheckArgs("-design", "demo2", "-checkpoint", dir, "-checkpoint-every", "1ns")
	require.Equal(t, exitViolated, code)
	code, out, errs := runCheckArgs("-design", "demo3", "-resume", dir)
	require.Equal(t, exitUsage, code)
	require.Equal(t, "", out)
	require.Equal(t, "explore check: resuming from the checkpoint in "+dir+"\nexplore check: checkpoint "+filepath.Join(dir, explore.CheckpointFile)+": it is of design redis/cad/none/plain, not redis/cad/write/max-token,token=33\n", errs)
	code, out, _ = runCheckArgs("-design", "demo2", "-resume", dir, "-steps", "9", "-json")
	require.Equal(t, exitUsage, code)
	require.Contains(t, out, `{"error":"checkpoint `)
	require.Contains(t, out, `its bounds are steps=0 states=0 memory=0 symmetry=true bitstate=0 first=false, not steps=9`)
}

// A search stopped by SIGINT writes a checkpoint at the end of its level;
// resumed, it prints what the search never stopped prints, byte for byte
// but the time line, in text and in -json.
func TestCheckResumeAfterSIGINT(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		args := []string{"-design", ckDesign}
		if asJSON {
			args = append(args, "-json")
		}
		code, want, _ := runCheckArgs(args...)
		require.Equal(t, exitViolated, code)
		dir := t.TempDir()
		// a checkpoint at every level: the first one says the search runs
		// (a signal before the handler is installed would just kill it)
		cmd, _, lines := startExplore(t, append([]string{"check", "-checkpoint", dir, "-checkpoint-every", "1ns"}, args...)...)
		waitFor(t, lines, "checkpoint: ")
		time.Sleep(time.Duration(rand.IntN(700)) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		waitFor(t, lines, "SIGINT: finishing the level to write a checkpoint")
		waitFor(t, lines, "checkpoint: "+filepath.Join(dir, explore.CheckpointFile))
		err := cmd.Wait()
		ee, ok := err.(*exec.ExitError)
		require.True(t, ok, "exit: %v", err)
		require.Contains(t, []int{exitIncomplete, exitViolated}, ee.ExitCode())
		_, info, err := explore.ReadCheckpoint(dir)
		require.NoError(t, err)
		t.Logf("stopped at depth %d, %d states", info.Depth, info.States)
		code, got, _ := runCheckArgs(append([]string{"-resume", dir}, args...)...)
		require.Equal(t, exitViolated, code)
		require.Equal(t, withoutTiming(want), withoutTiming(got))
	}
}

// withoutTiming blanks what is measured: the text's time line, the
// JSON's seconds, rate and peak memory.
func withoutTiming(s string) string {
	s = timing.ReplaceAllString(s, "time: …")
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, f := range []string{`"seconds":`, `"states_per_second":`, `"peak_memory_bytes":`} {
			if strings.Contains(l, f) {
				l = f + " …"
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// kill -9 at random moments of a search that writes a checkpoint at every
// level (most of its time): the folder always holds a whole checkpoint
// (once the first is written), never a torn one, and the last one resumes
// to the uninterrupted result.
func TestCheckpointSurvivesKill9(t *testing.T) {
	trials := 12
	if os.Getenv("LOCKCHECK_LONG") != "" {
		trials = 100
	}
	dir := t.TempDir()
	last := -1
	whole := 0
	for k := 0; k < trials; k++ {
		cmd, _, lines := startExplore(t, "check", "-design", ckDesign, "-checkpoint", dir, "-checkpoint-every", "1ns", "-json")
		waitFor(t, lines, "checkpoint: ") // this search's first is there
		go func() {
			for range lines {
			}
		}()
		if k%2 == 1 { // the last trial too
			// at a random moment
			time.Sleep(time.Duration(rand.IntN(1500)) * time.Millisecond)
		} else {
			// as soon as a write has begun, or a little after
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				if temps, _ := filepath.Glob(filepath.Join(dir, ".checkpoint-*.tmp")); len(temps) > 0 {
					break
				}
				time.Sleep(200 * time.Microsecond)
			}
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		cmd.Wait()
		design, info, err := explore.ReadCheckpoint(dir)
		require.NoError(t, err, "trial %d", k)
		require.Equal(t, "redlock/cad/none/plain", design)
		temps, _ := filepath.Glob(filepath.Join(dir, ".checkpoint-*.tmp"))
		require.LessOrEqual(t, len(temps), 1, "stale temporary files are removed") // the killed write's
		if len(temps) == 1 {
			whole++ // killed while writing, and the previous checkpoint is whole
		}
		last = info.Depth
	}
	require.Positive(t, whole, "no kill fell during a write")
	t.Logf("%d kills, %d during a write; last checkpoint at depth %d", trials, whole, last)
	code, want, _ := runCheckArgs("-design", ckDesign, "-json")
	require.Equal(t, exitViolated, code)
	code, got, _ := runCheckArgs("-design", ckDesign, "-json", "-resume", dir)
	require.Equal(t, exitViolated, code)
	require.Equal(t, withoutTiming(want), withoutTiming(got))
}
