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

// TestMergeRefusesTamperedLines: a line that explore simulate could not
// have written is bad input naming the field, never merged into a result.
func TestMergeRefusesTamperedLines(t *testing.T) {
	_, line, _ := runCmd("simulate", "-design", "demo2", "-runs", "20", "-seed", "3", "-shard", "0/2")
	_, line2, _ := runCmd("simulate", "-design", "demo2", "-runs", "20", "-seed", "3", "-shard", "1/2")
	line, line2 = strings.TrimSpace(line), strings.TrimSpace(line2)
	require.Contains(t, line, `"depth":1000`)
	sub := func(s, old, new string) string {
		require.Contains(t, s, old)
		return strings.Replace(s, old, new, 1)
	}
	for _, c := range []struct {
		name, input, want string
	}{
		{"unknown property", sub(line, `"properties":["exclusive"`, `"properties":["exclusiv"`), `line 1: properties: unknown property "exclusiv" (allowed: `},
		{"unknown property, results too", strings.ReplaceAll(line, `"exclusive"`, `"exclusiv"`), `line 1: properties: unknown property "exclusiv" (allowed: `},
		{"property twice", sub(line, `"properties":["exclusive"`, `"properties":["exclusive","exclusive"`), "line 1: properties: exclusive listed twice"},
		{"no property", sub(line, `"properties":["exclusive",`, `"properties":[`) + "", "line 1: "},
		{"depth 0", sub(line, `"depth":1000`, `"depth":0`), "line 1: depth 0: want 1 to "},
		{"depth too deep", sub(line, `"depth":1000`, `"depth":99999999`), "line 1: depth 99999999: want 1 to "},
		{"runs 0", sub(line, `"runs":20,`, `"runs":0,`), "line 1: runs 0: want 1 to 1000000000"},
		{"design", sub(line, `"design":"redis/cad/none/plain"`, `"design":"redis/cad/none/plai"`), "line 1: design: "},
		{"not canonical", sub(line, `"design":"redis/cad/none/plain"`, `"design":"demo2"`), `line 1: design "demo2": simulate writes the canonical name`},
		{"budget", sub(line, `"fault_budget":"`, `"fault_budget":"x`), "line 1: fault_budget "},
		{"no shards", sub(line, `"shards":[{"from":0,"to":10,"done":10}]`, `"shards":[]`), "line 1: shards: none"},
		{"two objects on a line", line + line2, "line 1: more after the shard's JSON object (from byte "},
		{"a stray brace", line + "}", "line 1: more after the shard's JSON object"},
		{"another seed", line + "\n" + sub(line2, `"seed":3`, `"seed":4`), "line 2 is another sweep than line 1: seed 4, line 1 3"},
		{"another depth", line + "\n" + sub(line2, `"depth":1000`, `"depth":999`), "line 2 is another sweep than line 1: depth 999, line 1 1000"},
		{"another swarm", line + "\n" + sub(line2, `"swarm":true`, `"swarm":false`), "line 2 is another sweep than line 1: swarm false, line 1 true"},
		{"other properties", line + "\n" + sub(line2, `"properties":["exclusive",`, `"properties":[`), "line 2"},
	} {
		defer func(r any) { stdinReader = r.(interface{ Read([]byte) (int, error) }) }(stdinReader)
		stdinReader = strings.NewReader(c.input + "\n")
		code, out, errs := runCmd("merge", "-json")
		require.Equal(t, exitUsage, code, "%s: %s", c.name, out)
		require.Equal(t, 1, strings.Count(errs, "\n"), "%s: %s", c.name, errs)
		require.Contains(t, errs, "explore merge: "+c.want, c.name)
		require.True(t, json.Valid([]byte(out)), c.name)
		require.Contains(t, out, `{"error":`, c.name)
	}
	// the untampered pair merges
	stdinReader = strings.NewReader(line + "\n" + line2 + "\n")
	code, _, errs := runCmd("merge", "-json")
	require.Contains(t, []int{exitOK, exitViolated}, code, errs)
}
