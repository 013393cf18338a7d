package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/counterexamples"
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
	require.Equal(t, "explore replay: "+bad+":2: unknown storage \"plane\" (did you mean plain?) (allowed: plain, max-token, max-write, cond-update, cas)\n", errs)

	code, _, errs = runCmd("replay", filepath.Join(dir, "missing.txt"))
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "no such file")

	code, _, errs = runCmd("replay")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "want one counterexample or scenario file")

	big := filepath.Join(dir, "big.txt")
	require.NoError(t, os.WriteFile(big, bytes.Repeat([]byte("x"), 5<<20), 0o644))
	code, _, errs = runCmd("replay", big)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "more than 4194304 bytes: too big for a counterexample or scenario file")
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

// TestReplayScenario: a scenario file tells its story, timeline and outcome,
// and every property's verdict on that schedule; its expect lines decide
// the exit code.
func TestReplayScenario(t *testing.T) {
	code, out, errs := runCmd("replay", "../../model/scenarios/demo2.txt")
	require.Equal(t, exitOK, code, errs)
	for _, want := range []string{
		"Demo 2: GC pause, no fencing.",
		"design demo2 = redis/cad/none/plain, 49 steps",
		"t=15 A: write counter = 1 → accepted  ✗ the key is C's", // the story
		"unsafe                                      ✗A",         // the timeline
		"lost update: counter 2 ≠ 3 accepted writes",             // the outcome
		"  exclusive           violated at step 46\n",
		"  own-release         holds\n",
		"  fenced              not-seen\n",
		"  contended           seen at step 2\n",
		"expect lines: all hold",
	} {
		require.Contains(t, out, want)
	}

	// without expect lines, an always-property violated on the schedule is exit 1
	data, err := os.ReadFile("../../model/scenarios/demo2.txt")
	require.NoError(t, err)
	dir := t.TempDir()
	noExpect := filepath.Join(dir, "mine.txt")
	require.NoError(t, os.WriteFile(noExpect, []byte(strings.Replace(string(data), "expect violated=exclusive,no-lost-update holds=own-release counter=2 accepted=3\n", "", 1)), 0o644))
	code, out, _ = runCmd("replay", noExpect)
	require.Equal(t, exitViolated, code)
	require.NotContains(t, out, "expect")

	// an expect line the replay contradicts: exit 1, named by its line
	wrong := filepath.Join(dir, "wrong.txt")
	require.NoError(t, os.WriteFile(wrong, []byte(strings.Replace(string(data), "counter=2", "counter=3", 1)), 0o644))
	code, out, _ = runCmd("replay", wrong)
	require.Equal(t, exitViolated, code)
	require.Contains(t, out, "expect: "+wrong+":9: expected counter=3, the replay gives 2")

	// a safe schedule without expect lines: exit 0
	safe := filepath.Join(dir, "safe.txt")
	require.NoError(t, os.WriteFile(safe, []byte("design redis/cad/none/plain,clients=1\nA acquire\nA read\ntick 2\nA write\nA release\n"), 0o644))
	code, out, _ = runCmd("replay", safe)
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "  exclusive           holds\n")

	// a step that is not enabled: exit 2, FILE:LINE
	notEnabled := filepath.Join(dir, "bad.txt")
	require.NoError(t, os.WriteFile(notEnabled, []byte("design demo2\nA acquire\nB acquire x3\n"), 0o644))
	code, out, errs = runCmd("replay", notEnabled)
	require.Equal(t, exitUsage, code)
	require.Empty(t, out)
	require.Contains(t, errs, "explore replay: "+notEnabled+":3: step 3 (B acquire) is not enabled at t=1")
	require.Equal(t, 1, strings.Count(errs, "\n"))

	// neither kind of file
	junk := filepath.Join(dir, "junk.txt")
	require.NoError(t, os.WriteFile(junk, []byte("hello\n"), 0o644))
	code, _, errs = runCmd("replay", junk)
	require.Equal(t, exitUsage, code)
	require.Equal(t, "explore replay: "+junk+":1: \"hello\" before the design line (want \"design NAME\" first) (a counterexample file's first line is \"lockcheck counterexample\")\n", errs)

	// -json
	code, out, _ = runCmd("replay", "-json", "../../model/scenarios/demo2.txt")
	require.Equal(t, exitOK, code)
	var j replayScenarioJSON
	require.NoError(t, json.Unmarshal([]byte(out), &j))
	require.Equal(t, "scenario", j.Kind)
	require.Equal(t, 49, j.Steps)
	require.Equal(t, "violated", j.Properties[0].Status)
	require.Equal(t, 46, *j.Properties[0].Step)
	require.Empty(t, j.Expect)
}

// TestOddFolderNames: counterexamples written under a folder whose name has
// a newline, a $(...), a quote or a space are read back by replay, and
// their regenerate: and replay: lines, pasted into bash, name the folder
// and run nothing else.
func TestOddFolderNames(t *testing.T) {
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	root := t.TempDir()
	for _, name := range []string{"nl\ndir", "$(touch ran)", "it's", "a b", "tab\there"} {
		dir := filepath.Join(root, name)
		code, out, errs := runCmd("check", "-design", "demo4", "-properties", "own-release", "-out", dir)
		require.Equal(t, exitViolated, code, errs)
		m := regexp.MustCompile(`(?m)^wrote (.*)$`).FindStringSubmatch(out)
		require.NotNil(t, m, out)
		file := filepath.Join(dir, "redis-del-none-plain_pauses-0_slow-1--own-release.txt")
		code, out, errs = runCmd("replay", file)
		require.Equal(t, exitOK, code, "%q: %s", name, errs)
		require.NotContains(t, out, "not what the model writes now", name)
		text, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, key := range []string{"replay:", "regenerate:"} {
			line := regexp.MustCompile(`(?m)^` + key + ` +(.*)$`).FindStringSubmatch(string(text))
			require.NotNil(t, line, key)
			// the command's last word, as bash reads it
			cmd := strings.Replace(line[1], "go run ./cmd/explore", "printf '%s\\n'", 1)
			got, err := exec.Command(bash, "-c", cmd).Output()
			require.NoError(t, err, cmd)
			words := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
			last := words[len(words)-1]
			if name == "nl\ndir" { // printf puts each word on a line: the path's own newline splits it
				last = words[len(words)-2] + "\n" + last
			}
			want := file
			if key == "regenerate:" {
				want = dir
			}
			require.Equal(t, want, last, "%s %q", key, name)
		}
		// the wrote line too
		code, out, _ = runCmd("simulate", "-design", "demo4", "-runs", "50", "-properties", "own-release", "-out", dir)
		require.Equal(t, exitViolated, code)
		require.Contains(t, out, "wrote "+counterexamples.ShellQuote(file)+"\n")
	}
	require.NoFileExists(t, "ran")
	require.NoFileExists(t, filepath.Join(root, "ran"))
}
