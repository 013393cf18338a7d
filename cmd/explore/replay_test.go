package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

const demo4File = "../../counterexamples/redis-del-none-plain_pauses-0_slow-1--own-release.txt"

func TestReplayStillShows(t *testing.T) {
	code, out, errs := runCmd("replay", demo4File)
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, "still shows its violation: redis/del/none/plain,clients=2,pauses=0,slow=1 breaks own-release at step")
	require.NotContains(t, out, "note:")
}

func TestReplayNoLongerShows(t *testing.T) {
	data, err := os.ReadFile(demo4File)
	require.NoError(t, err)
	// the same trace against check-and-delete: it replays, nothing is deleted
	fixed := strings.ReplaceAll(string(data), "redis/del/", "redis/cad/")
	p := filepath.Join(t.TempDir(), "fixed.txt")
	require.NoError(t, os.WriteFile(p, []byte(fixed), 0o644))
	code, out, _ := runCmd("replay", p)
	require.Equal(t, exitViolated, code)
	require.Contains(t, out, "NO LONGER shows its violation")
	require.Contains(t, out, "no longer violates own-release")

	// an edited step that is not enabled: the reason names FILE:LINE
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if l == "B acquire" {
			lines[i] = "B write"
			require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644))
			code, out, _ = runCmd("replay", p)
			require.Equal(t, exitViolated, code)
			require.Contains(t, out, p+":"+strconv.Itoa(i+1)+": the trace no longer replays: step 2 (B write) is not enabled")
			break
		}
	}
}

func TestReplayBadFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("lockcheck counterexample\ndesign: redis/cad/none/plane\n"), 0o644))
	code, out, errs := runCmd("replay", bad)
	require.Equal(t, exitUsage, code)
	require.Empty(t, out)
	require.Equal(t, "explore replay: "+bad+":2: unknown storage \"plane\" (allowed: plain, max-token, max-write, cond-update, cas)\n", errs)

	code, _, errs = runCmd("replay", filepath.Join(dir, "missing.txt"))
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "no such file")

	code, _, errs = runCmd("replay")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "want one counterexample file")

	big := filepath.Join(dir, "big.txt")
	require.NoError(t, os.WriteFile(big, bytes.Repeat([]byte("x"), 5<<20), 0o644))
	code, _, errs = runCmd("replay", big)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "not a counterexample file")
}

func TestReplayNotesAStaleFile(t *testing.T) {
	data, err := os.ReadFile(demo4File)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "stale.txt")
	require.NoError(t, os.WriteFile(p, bytes.Replace(data, []byte("--- story ---\n"), []byte("--- story ---\nonce upon a time\n"), 1), 0o644))
	code, out, _ := runCmd("replay", p)
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "note: these parts of the file are not what the model writes now: story (regenerate: go run ./cmd/explore regen)")
}
