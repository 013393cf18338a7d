package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/counterexamples"
)

var simSeconds = regexp.MustCompile(`"seconds":[0-9.e+-]+`)
var simTime = regexp.MustCompile(`(?m)^simulation: [0-9,]+ steps; time: .*$`)

// The shards of a sweep, merged, give what the whole sweep gives, byte for
// byte but the time, in JSON and in text; the same shards in another order
// too.
func TestSimulateShardsMerge(t *testing.T) {
	base := []string{"simulate", "-design", "demo2", "-runs", "60", "-seed", "3"}
	code, whole, errs := runCmd(append(base, "-json")...)
	require.Equal(t, exitViolated, code, errs)
	require.Equal(t, 1, strings.Count(whole, "\n"), "one JSON line")
	_, wholeText, _ := runCmd(base...)

	dir := t.TempDir()
	var files []string
	for _, sh := range []string{"2/3", "0/3", "1/3"} {
		code, line, errs := runCmd(append(base, "-shard", sh)...)
		require.Equal(t, 1, strings.Count(line, "\n"), "a shard prints one JSON line")
		require.Contains(t, []int{exitOK, exitViolated}, code, errs) // a shard that played its runs is complete
		p := filepath.Join(dir, strings.ReplaceAll(sh, "/", "-")+".jsonl")
		require.NoError(t, os.WriteFile(p, []byte(line), 0o644))
		files = append(files, p)
	}
	code, merged, errs := runCmd(append([]string{"merge", "-json"}, files...)...)
	require.Equal(t, exitViolated, code, errs)
	require.Equal(t, simSeconds.ReplaceAllString(whole, ""), simSeconds.ReplaceAllString(merged, ""))

	// from stdin, as after cat shard-*.jsonl
	var all []byte
	for _, f := range files {
		b, _ := os.ReadFile(f)
		all = append(all, b...)
	}
	defer func(r any) { stdinReader = r.(interface{ Read([]byte) (int, error) }) }(stdinReader)
	stdinReader = bytes.NewReader(all)
	code, mergedText, errs := runCmd("merge")
	require.Equal(t, exitViolated, code, errs)
	require.Equal(t, simTime.ReplaceAllString(wholeText, ""), simTime.ReplaceAllString(mergedText, ""))
	require.Contains(t, mergedText, "  exclusive           violated (")

	// a missing shard: partial, exit 3 (no violation in the rest) or 1
	code, _, errs = runCmd("merge", files[1])
	require.Contains(t, []int{exitIncomplete, exitViolated}, code)
	require.Contains(t, errs, "explore merge: runs not played: 20…59; the result is partial\n")

	// the same shard twice, another sweep, not a shard line
	other := filepath.Join(dir, "other.jsonl")
	_, line, _ := runCmd("simulate", "-design", "demo2", "-runs", "60", "-seed", "4", "-shard", "0/3")
	require.NoError(t, os.WriteFile(other, []byte(line), 0o644))
	junk := filepath.Join(dir, "junk.jsonl")
	require.NoError(t, os.WriteFile(junk, []byte("{\"kind\": \"x\"}\n"), 0o644))
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{files[0], files[0]}, "come twice"},
		{[]string{files[0], other}, "another sweep"},
		{[]string{junk}, "want a line of explore simulate -shard i/n"},
	} {
		code, out, errs := runCmd(append([]string{"merge", "-json"}, c.files...)...)
		require.Equal(t, exitUsage, code, c.want)
		require.Contains(t, errs, c.want)
		require.Equal(t, 1, strings.Count(errs, "\n"))
		var e map[string]string
		require.NoError(t, json.Unmarshal([]byte(out), &e))
		require.Contains(t, e["error"], c.want)
	}
}

// A shard that played its runs and found nothing exits 0.
func TestSimulateShardExit(t *testing.T) {
	code, out, errs := runCmd("simulate", "-design", "demo6", "-properties", "no-lost-update", "-runs", "20", "-shard", "1/2")
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, `"shards":[{"from":10,"to":20,"done":10}]`)
}

// -out writes the shrunk counterexamples as check does; each replays.
func TestSimulateOut(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCmd("simulate", "-design", "demo4", "-runs", "100", "-properties", "own-release", "-out", dir)
	require.Equal(t, exitViolated, code, errs)
	m := regexp.MustCompile(`(?m)^wrote (.*)$`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	text, err := os.ReadFile(m[1])
	require.NoError(t, err)
	f, err := counterexamples.Parse(string(text))
	require.NoError(t, err)
	require.True(t, f.Replay().Shows)
	require.Contains(t, string(text), "random simulation, run ")
	code, out, _ = runCmd("replay", m[1])
	require.Equal(t, exitOK, code, out)
}

func TestSimulateBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-runs", "0"}, "-runs 0: want 1 to"},
		{[]string{"-depth", "0"}, "-depth 0: want 1 to"},
		{[]string{"-shard", "3/3"}, `-shard "3/3": want i/n`},
		{[]string{"-shard", "01/3"}, `-shard "01/3": want i/n`},
		{[]string{"-design", "nope"}, "nope"},
		{[]string{"-seed", "-1"}, "invalid value"},
		{[]string{"x"}, "unexpected argument"},
	} {
		code, out, errs := runCmd(append([]string{"simulate"}, c.args...)...)
		require.Equal(t, exitUsage, code, c.args)
		require.Equal(t, 1, strings.Count(errs, "\n"), errs)
		require.Contains(t, errs, c.want)
		if c.args[0] == "-shard" { // a shard job answers in JSON
			require.Contains(t, out, `{"error":`)
		} else {
			require.Empty(t, out)
		}
	}
}

// The flag parser never panics; what it accepts is valid.
func FuzzSimulateArgs(f *testing.F) {
	f.Add("-design demo2 -runs 10 -depth 50 -seed 3 -shard 1/4")
	f.Add("-swarm=false -workers 2 -json -properties exclusive")
	f.Add("-shard 0/0 -runs -1")
	f.Fuzz(func(t *testing.T, line string) {
		a, help, _, err := parseSimArgs(strings.Fields(line))
		if help || err != nil {
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("error has several lines: %q", err)
			}
			return
		}
		from, to := a.shard.runs(a.runs)
		if a.design.Validate() != nil || a.runs < 1 || a.depth < 1 || from < 0 || to > a.runs || from > to || len(a.props) == 0 {
			t.Fatalf("accepted %+v", a)
		}
	})
}

// merge never panics on any input, and bad input is one line, exit 2.
func FuzzMerge(f *testing.F) {
	_, line, _ := runCmd("simulate", "-design", "demo1", "-runs", "4", "-shard", "0/2")
	f.Add(line)
	f.Add(line + line)
	f.Add(`{"kind":"lockcheck-simulate","runs":-1}`)
	f.Add("not json\n")
	f.Fuzz(func(t *testing.T, input string) {
		defer func(r any) { stdinReader = r.(interface{ Read([]byte) (int, error) }) }(stdinReader)
		stdinReader = strings.NewReader(input)
		var out, errb bytes.Buffer
		code := run([]string{"merge", "-json"}, &out, &errb)
		switch code {
		case exitOK, exitViolated, exitIncomplete:
		case exitUsage:
			if !json.Valid(out.Bytes()) || !strings.HasPrefix(errb.String(), "explore merge: ") {
				t.Fatalf("%q: %q, %q", input, out.String(), errb.String())
			}
		default:
			t.Fatalf("exit %d", code)
		}
	})
}
