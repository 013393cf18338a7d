package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"lockcheck/explore"
)

// TestMain lets the tests run this binary as the explore command (to send
// it signals): with LOCKCHECK_EXPLORE_MAIN=1 the arguments are a command line.
func TestMain(m *testing.M) {
	if os.Getenv("LOCKCHECK_EXPLORE_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// startExplore starts explore as a process; stderr lines come on the channel.
func startExplore(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LOCKCHECK_EXPLORE_MAIN=1")
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return cmd, &out, lines
}

// waitFor reads stderr lines until one contains want.
func waitFor(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "stderr ended before %q", want)
			if strings.Contains(l, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q on stderr", want)
		}
	}
}

// exitAfter sends sig and waits for the exit; it returns the code and the
// time the process took to stop.
func exitAfter(t *testing.T, cmd *exec.Cmd, sig os.Signal) (int, time.Duration) {
	t.Helper()
	t0 := time.Now()
	require.NoError(t, cmd.Process.Signal(sig))
	err := cmd.Wait()
	took := time.Since(t0)
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), took
	}
	require.NoError(t, err)
	return 0, took
}

// The 4-client Redlock design: 121 M states, its exclusive violation after
// about 3 M. SIGINT before any violation: the partial result says what was
// proved, exit 3. SIGTERM after the violation line: the violation stands
// (exit 1), the rest is incomplete, the JSON names the signal.
func TestSignalsStopWithThePartialResult(t *testing.T) {
	cmd, out, lines := startExplore(t, "check", "-design", "redlock/cad/none/plain", "-clients", "4", "-properties", "own-release", "-workers", "2")
	time.Sleep(500 * time.Millisecond)
	code, took := exitAfter(t, cmd, os.Interrupt)
	t.Logf("SIGINT: stopped in %v", took)
	require.Equal(t, exitIncomplete, code, out.String())
	require.Regexp(t, `  own-release         incomplete: no counterexample up to depth \d+ \([0-9,]+ states\)\n`, out.String())
	require.Contains(t, out.String(), "interrupted by SIGINT; every step checked up to depth")

	outDir := t.TempDir()
	cmd, out, lines = startExplore(t, "check", "-design", "redlock/cad/none/plain", "-clients", "4", "-properties", "exclusive,no-lost-update", "-json", "-workers", "2", "-out", outDir)
	waitFor(t, lines, "exclusive violated (72 steps)")
	code, took = exitAfter(t, cmd, syscall.SIGTERM)
	t.Logf("SIGTERM: stopped in %v", took)
	require.Equal(t, exitViolated, code, out.String())
	var got checkJSON
	require.NoError(t, json.Unmarshal(out.Bytes(), &got), out.String())
	require.Equal(t, "interrupted", got.Stats.StoppedBy)
	require.Equal(t, "SIGTERM", got.Stats.Signal)
	require.Equal(t, string(explore.Violated), got.Results[0].Status)
	require.Equal(t, 72, *got.Results[0].TraceLength)
	require.NotNil(t, got.Results[0].Linearizable)
	if got.Results[1].Status != string(explore.Violated) { // unless it came before the signal
		require.Equal(t, string(explore.Incomplete), got.Results[1].Status)
		require.Less(t, got.Stats.ProvedDepth, 120)
	}
	require.GreaterOrEqual(t, got.Stats.ProvedDepth, 72)
	// -out keeps what was found before the signal
	require.NotEmpty(t, got.Files)
	require.FileExists(t, filepath.Join(outDir, "redlock-cad-none-plain_clients-4--exclusive.txt"))
}

// With -json, bad input is also {"error": "..."} on stdout, exit 2.
func TestJSONErrors(t *testing.T) {
	for _, args := range [][]string{
		{"check", "-design", "nope", "-json"},
		{"check", "-json", "-bogus"},
		{"check", "-json", "-steps", "-1"},
		{"check", "-json", "extra"},
		{"matrix", "-json", "-workers", "-3"},
		{"matrix", "-bogus", "-json"},
		{"replay", "-json", "/nonexistent/x.txt"},
		{"replay", "-json"},
		{"simulate", "-json", "-runs", "0"},
		{"merge", "-json", "/nonexistent"},
	} {
		code, out, errs := runCmd(args...)
		require.Equal(t, exitUsage, code, args)
		var got map[string]string
		require.NoError(t, json.Unmarshal([]byte(out), &got), "%v: %q", args, out)
		require.Len(t, got, 1)
		require.NotEmpty(t, got["error"], args)
		require.Equal(t, "explore "+args[0]+": "+got["error"]+"\n", errs, args)
	}
	code, out, _ := runCmd("check", "-design", "nope", "-json=false")
	require.Equal(t, exitUsage, code)
	require.Empty(t, out)
}

// On a terminal the progress line is rewritten in place and cleared before
// any other line; in a pipe it is a line of its own, at most every
// pipeEvery.
func TestProgressPrinter(t *testing.T) {
	var b bytes.Buffer
	p := &progressPrinter{w: &b, tty: true, prefix: "explore check: "}
	s := explore.Progress{States: 1234567, Depth: 7, Seconds: 65, Level: 200, LevelDone: 50, MemoryBytes: 3 << 20}
	p.progress(s)
	p.progress(s)
	p.line("exclusive violated (3 steps)")
	p.done()
	text := b.String()
	require.Equal(t, 1, strings.Count(text, "\r\x1b[K"), text) // cleared once, before the line
	require.Regexp(t, `^\rexplore check: 1,234,567 states, depth 7 \(level 25% of 200\), 18,993 states/s, [0-9,]+ MB( resident)?, 1m05s\x1b\[K\r`, text)
	require.True(t, strings.HasSuffix(text, "\r\x1b[Kexplore check: exclusive violated (3 steps)\n"), "%q", text)

	b.Reset()
	p = &progressPrinter{w: &b, prefix: "x: "}
	p.progress(s)
	p.progress(s) // within pipeEvery: not printed
	p.line("done")
	p.done()
	require.Equal(t, 2, strings.Count(b.String(), "\n"), b.String())
	require.NotContains(t, b.String(), "\r")
}

// -max-memory bounds the process's resident memory: the peak (getrusage)
// stays within 10% of it. In a process of its own, so that the test
// binary's other tests do not count.
func TestMaxMemoryBoundsResidentMemory(t *testing.T) {
	const limitMB = 100
	cmd := exec.Command(os.Args[0], "check", "-design", "redlock/cad/none/plain", "-clients", "4", "-max-memory", strconv.Itoa(limitMB), "-json", "-workers", "2")
	cmd.Env = append(os.Environ(), "LOCKCHECK_EXPLORE_MAIN=1")
	out, err := cmd.Output()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, exitIncomplete, ee.ExitCode())
	var got checkJSON
	require.NoError(t, json.Unmarshal(out, &got))
	require.Equal(t, "max-memory", got.Stats.StoppedBy)
	peakMB := float64(got.Stats.PeakMemoryBytes) / (1 << 20)
	t.Logf("-max-memory %d: peak resident %.1f MB, %d states", limitMB, peakMB, got.Stats.Distinct)
	require.LessOrEqual(t, peakMB, 1.1*limitMB)
	require.Greater(t, got.Stats.Distinct, int64(1_000_000), "the budget is used, not wasted")
}

func TestReplayJSON(t *testing.T) {
	code, out, errs := runCmd("replay", "-json", demo4File)
	require.Equal(t, exitOK, code, errs)
	var got replayJSON
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.True(t, got.Shows)
	require.Equal(t, "own-release", got.Property)
	require.NotNil(t, got.Step)
	require.Equal(t, got.Steps, *got.Step)
}

// SIGINT stops a simulation too: the runs played so far, exit 3.
func TestSimulateInterrupted(t *testing.T) {
	cmd, out, _ := startExplore(t, "simulate", "-design", "redlock/cad/none/plain", "-clients", "4", "-runs", "100000000", "-properties", "mutex", "-workers", "2")
	time.Sleep(500 * time.Millisecond)
	code, took := exitAfter(t, cmd, os.Interrupt)
	t.Logf("SIGINT: stopped in %v", took)
	require.Contains(t, []int{exitIncomplete, exitViolated}, code, out.String())
	require.Regexp(t, `played: [0-9]+ of the 100000000 runs`, out.String())
}
