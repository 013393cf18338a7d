package counterexamples

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/explore"
	"lockcheck/model"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the checked-in counterexample files (read the diff before committing)")

// displayDir is this folder as the files' replay commands name it: the
// commands run from the repository root.
const displayDir = "counterexamples"

var (
	genOnce  sync.Once
	genFound []Found
	genErr   error
)

// generated is the catalogue's files as the model makes them now.
func generatedNow(t *testing.T) []Found {
	t.Helper()
	genOnce.Do(func() { genFound, genErr = Generate(displayDir) })
	require.NoError(t, genErr)
	return genFound
}

// TestGolden regenerates every file of the folder and fails on any
// difference; -rewrite writes them instead.
func TestGolden(t *testing.T) {
	if *rewrite {
		diffs, err := Regen(".", displayDir, false)
		require.NoError(t, err)
		for _, d := range diffs {
			t.Log("rewrote", d)
		}
		return
	}
	outs := Outputs(generatedNow(t))
	want := map[string]bool{}
	for _, o := range outs {
		want[o.Name] = true
		old, err := os.ReadFile(o.Name)
		if err != nil {
			t.Errorf("%s: missing (go test ./counterexamples -rewrite, or %s)", o.Name, RegenCommand)
			continue
		}
		if !bytes.Equal(old, o.Data) {
			t.Errorf("%s: differs from what the model writes now:\n%s\n(go test ./counterexamples -rewrite, then read the diff)", o.Name, firstDiff(string(old), string(o.Data)))
		}
	}
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	for _, e := range entries {
		if !e.IsDir() && generated(e.Name()) && !want[e.Name()] {
			t.Errorf("%s: not made by the catalogue (go test ./counterexamples -rewrite removes it)", e.Name())
		}
	}
}

// firstDiff shows the first line that differs.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  file: %q\n  now:  %q", i+1, clip(x), clip(y))
		}
	}
	return "(same lines, different bytes)"
}

func checkedInFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.txt")
	require.NoError(t, err)
	sort.Strings(files)
	return files
}

// TestReplayEveryFile replays every counterexample of the folder and fails
// when one no longer shows its violation.
func TestReplayEveryFile(t *testing.T) {
	files := checkedInFiles(t)
	require.NotEmpty(t, files, "no counterexample files in the folder")
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := Parse(string(data))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		v := f.Replay()
		if !v.Shows {
			t.Errorf("%s: no longer shows its violation: %s", name, v.Reason)
			continue
		}
		require.Equal(t, f.ViolatedAt, v.Step, "%s: violated at another step", name)
		require.Equal(t, len(f.Trace), v.Step, "%s: a shortest counterexample ends at its violation", name)
		stale, err := f.Stale()
		require.NoError(t, err, name)
		require.Empty(t, stale, "%s: parts differ from what the model writes now", name)
		require.Equal(t, displayDir+"/"+name, strings.TrimPrefix(f.ReplayCmd, "go run ./cmd/explore replay "))
	}
}

// TestCatalogueCoversEveryAxisValue: every value of every axis, and every
// fault of the budget, is in some catalogue design, and the seed's Demo 2,
// 4 and 5 are among them.
func TestCatalogueCoversEveryAxisValue(t *testing.T) {
	found := generatedNow(t)
	used := map[string]bool{}
	for _, name := range Catalogue {
		d, err := model.ParseDesign(name)
		require.NoError(t, err)
		require.Equal(t, model.BugNone, d.Bug, "%s: the catalogue holds real designs, not planted bugs", name)
		for _, v := range []fmt.Stringer{d.Lock, d.Acquire, d.Release, d.Fence, d.Storage, d.Clock, d.Quorum, d.Check, d.Wait, d.Tx} {
			used[fmt.Sprintf("%T=%s", v, v)] = true
		}
		for fault, n := range map[string]int{"pauses": d.Pauses, "slow": d.SlowJobs, "crashes": d.Crashes, "node-crashes": d.NodeCrashes,
			"jumps": d.ClockJumps, "delays": d.Delays, "renew": d.RenewTicks} {
			if n > 0 {
				used[fault] = true
			}
		}
		if d.Lock == model.LockReplica && d.Failovers > 0 {
			used["failovers"] = true
		}
	}
	missing := []string{}
	for i := 0; ; i++ {
		more := false
		for _, v := range []fmt.Stringer{model.LockKind(i), model.AcquireMode(i), model.ReleaseMode(i), model.FenceMode(i), model.StorageMode(i),
			model.ClockMode(i), model.Quorum(i), model.CheckMode(i), model.WaitMode(i), model.TxMode(i)} {
			if strings.Contains(v.String(), "(") { // past the axis's last value
				continue
			}
			more = true
			if !used[fmt.Sprintf("%T=%s", v, v)] {
				missing = append(missing, fmt.Sprintf("%T=%s", v, v))
			}
		}
		if !more {
			break
		}
	}
	for _, fault := range []string{"pauses", "slow", "crashes", "node-crashes", "jumps", "delays", "renew", "failovers"} {
		if !used[fault] {
			missing = append(missing, fault)
		}
	}
	require.Empty(t, missing, "axis values and faults that no catalogue design uses")
	for _, demo := range []string{"demo2", "demo4", "demo5"} {
		n := 0
		for _, f := range found {
			if f.Name == demo {
				n++
			}
		}
		require.Positive(t, n, "%s has no counterexample file", demo)
	}
}

// TestRenameMakesEquivalentCounterexamplesReadTheSame permutes the clients
// of a counterexample in every way: each permutation replays to the same
// violation and renders to the same bytes.
func TestRenameMakesEquivalentCounterexamplesReadTheSame(t *testing.T) {
	found := generatedNow(t)
	for _, f := range found[:4] {
		r := f.Rendered
		d := r.Run.Design
		perms := [][3]uint8{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
		if d.Clients == 2 {
			perms = [][3]uint8{{0, 1, 2}, {1, 0, 2}}
		}
		if d.Clients == 1 {
			perms = [][3]uint8{{0, 1, 2}}
		}
		parsed, err := Parse(string(r.Text))
		require.NoError(t, err)
		for _, p := range perms {
			tr := make([]model.Action, len(r.Trace))
			for k, a := range r.Trace {
				if a.Kind.ByClient() {
					a.Client = p[a.Client]
				}
				tr[k] = a
			}
			run, err := model.Replay(&d, tr)
			require.NoError(t, err, "permutation %v", p)
			_, ok := run.Violated(f.Property)
			require.True(t, ok, "permutation %v of %s", p, r.Base)
			again, err := Render(Counterexample{Design: d, Property: f.Property, Trace: tr, Bounds: BoundsText(d, SearchBounds), Regenerate: RegenCommand,
				Base: r.Base, Clients: parsed.Clients, Prevented: parsed.Sections[secPrevented]}, displayDir+"/"+r.Base+".txt")
			require.NoError(t, err)
			require.Equal(t, string(r.Text), string(again.Text), "permutation %v", p)
		}
	}
	// first appearance: B, then C, then A becomes A, B, C
	tr := []model.Action{{Kind: model.ActAcquire, Client: 1}, {Kind: model.ActTick}, {Kind: model.ActAcquire, Client: 2}, {Kind: model.ActRead, Client: 1}}
	got := Rename(tr, 3)
	require.Equal(t, []model.Action{{Kind: model.ActAcquire, Client: 0}, {Kind: model.ActTick}, {Kind: model.ActAcquire, Client: 1}, {Kind: model.ActRead, Client: 0}}, got)
	// actions of the lock service name no client and are left alone
	tr = []model.Action{{Kind: model.ActAcquire, Client: 2}, {Kind: model.ActFailover}, {Kind: model.ActNodeCrash, Arg: 1}, {Kind: model.ActAcquire, Client: 0}}
	got = Rename(tr, 3)
	require.Equal(t, []model.Action{{Kind: model.ActAcquire, Client: 0}, {Kind: model.ActFailover}, {Kind: model.ActNodeCrash, Arg: 1}, {Kind: model.ActAcquire, Client: 1}}, got)
}

// TestStepsSectionIsAScenario: the steps section, cut out, is a scenario
// file that model.ParseScenario reads to the same trace.
func TestStepsSectionIsAScenario(t *testing.T) {
	for _, f := range generatedNow(t) {
		text := string(f.Rendered.Text)
		_, steps, ok := strings.Cut(text, "--- "+stepsTitle+" ---\n")
		require.True(t, ok)
		steps = strings.TrimSuffix(steps, "--- end ---\n")
		sc, err := model.ParseScenario(steps)
		require.NoError(t, err, f.Rendered.Base)
		require.Equal(t, f.Rendered.Trace, sc.Trace, f.Rendered.Base)
		require.Equal(t, f.Rendered.Run.Design, sc.Design)
	}
}

// demoFile is a checked-in file used by the corruption tests.
const demoFile = "redis-del-none-plain_pauses-0_slow-1--own-release.txt"

func readDemoFile(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(demoFile)
	require.NoError(t, err)
	return string(data)
}

// lineOf is the 1-based number of the first line equal to s (after
// trimming), or of the first line starting with prefix s.
func lineOf(t *testing.T, text, s string) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == s || strings.HasPrefix(l, s) {
			return i + 1
		}
	}
	t.Fatalf("no line %q", s)
	return 0
}

func replaceLine(text string, line int, with string) string {
	lines := strings.Split(text, "\n")
	lines[line-1] = with
	return strings.Join(lines, "\n")
}

// TestPlantedCorruptionsNameTheLine edits a good file in the ways a person
// or a bad merge would, and checks each gives an error naming the line.
func TestPlantedCorruptionsNameTheLine(t *testing.T) {
	good := readDemoFile(t)
	_, err := Parse(good)
	require.NoError(t, err)
	stepsAt := lineOf(t, good, "--- "+stepsTitle+" ---")
	firstStep := stepsAt + 2 // after the design line
	require.Equal(t, "A acquire", strings.TrimSpace(strings.Split(good, "\n")[firstStep-1]))
	lines := strings.Split(good, "\n")

	designAt := lineOf(t, good, "design:")
	designLine := lines[designAt-1]
	storyAt := lineOf(t, good, "--- story ---")
	cases := []struct {
		name string
		text string
		line int
		msg  string
	}{
		{"edited trace line", replaceLine(good, firstStep, "A acquir"), firstStep, "unknown verb"},
		{"client out of range", replaceLine(good, firstStep, "E acquire"), firstStep, "the design has 2 clients"},
		{"bad tick count", replaceLine(good, firstStep, "tick 0"), firstStep, "tick N"},
		{"unknown design", replaceLine(good, designAt, "design:       redis/cad/none/plane"), designAt, "unknown storage"},
		{"unknown design in steps", replaceLine(good, stepsAt+1, "design redis/xyz/none/plain"), stepsAt + 1, "unknown release"},
		{"steps design differs", replaceLine(good, stepsAt+1, "design redis/cad/none/plain"), stepsAt + 1, "but the header"},
		{"unknown property", replaceLine(good, lineOf(t, good, "property:"), "property:     mutual-exclusion"), lineOf(t, good, "property:"), "want an always property"},
		{"sometimes property", replaceLine(good, lineOf(t, good, "property:"), "property:     contended"), lineOf(t, good, "property:"), "want an always property"},
		{"unknown header key", replaceLine(good, 3, "colour: red"), 3, "header line"},
		{"preset of another design", strings.Replace(good, designLine+"\n", designLine+"\npreset:       demo2\n", 1), designAt + 1, "not the design"},
		{"truncated in the steps", strings.Join(lines[:firstStep+5], "\n"), firstStep + 6, "no \"--- end ---\" line"},
		{"truncated in the story", strings.Join(lines[:storyAt+1], "\n") + "\n", storyAt + 2, "ends inside the story"},
		{"truncated after the header", strings.Join(lines[:5], "\n") + "\n", 6, "ends after the header"},
		{"no design line", strings.Replace(good, designLine+"\n", "", 1), lineOf(t, good, "--- why ---") - 1, "no design line"},
		{"step removed", strings.Replace(good, "\nA acquire\n", "\n", 1), lineOf(t, good, "violated at:"), "the header says"},
		{"first line", "hello\n" + good, 1, "first line"},
		{"empty", "", 1, "empty first line"},
		{"unknown section", strings.Replace(good, "--- outcome ---", "--- results ---", 1), lineOf(t, good, "--- outcome ---"), "unknown section"},
		{"sections out of order", strings.Replace(strings.Replace(good, "--- story ---", "--- x ---", 1), "--- timeline ---", "--- story ---", 1), lineOf(t, good, "--- story ---"), "unknown section"},
		{"prevented before the story", strings.Replace(good, "--- story ---", "--- prevented ---\n\n--- story ---", 1), storyAt + 2, "out of place"},
		{"text after the end", good + "A read\n", len(lines), "after the end line"},
		{"bad violated at", replaceLine(good, lineOf(t, good, "violated at:"), "violated at:  step forty"), lineOf(t, good, "violated at:"), "step N of M"},
		{"duplicate key", replaceLine(good, lineOf(t, good, "found by:"), "design:       demo4"), lineOf(t, good, "found by:"), "second \"design\" line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.text)
			require.Error(t, err)
			var pe *ParseError
			require.True(t, errors.As(err, &pe), "%v is not a *ParseError", err)
			require.Equal(t, c.line, pe.Line, "%v", err)
			require.Contains(t, err.Error(), c.msg)
		})
	}
}

// TestReplayNamesTheLineOfAStepThatNoLongerReplays: a trace line edited to
// another valid action that is not enabled parses, but replay says the
// file no longer shows its violation and names the line.
func TestReplayNamesTheLineOfAStepThatNoLongerReplays(t *testing.T) {
	good := readDemoFile(t)
	stepsAt := lineOf(t, good, "--- "+stepsTitle+" ---")
	line := stepsAt + 3 // the second step, "B acquire"
	require.Equal(t, "B acquire", strings.TrimSpace(strings.Split(good, "\n")[line-1]))
	f, err := Parse(replaceLine(good, line, "B write"))
	require.NoError(t, err)
	v := f.Replay()
	require.False(t, v.Shows)
	require.Contains(t, v.Reason, fmt.Sprintf("line %d: the trace no longer replays: step 2 (B write) is not enabled", line))
}

// TestReplayCatchesAFixedDesign tests the replay test: the demo 4 trace
// (slow job, plain DEL) replayed against check-and-delete still replays,
// but no longer shows own-release; a file claiming a property its trace
// does not break is caught too.
func TestReplayCatchesAFixedDesign(t *testing.T) {
	good := readDemoFile(t)
	fixed := strings.ReplaceAll(good, "redis/del/none/plain,clients=2,pauses=0,slow=1", "redis/cad/none/plain,clients=2,pauses=0,slow=1")
	f, err := Parse(fixed)
	require.NoError(t, err)
	v := f.Replay()
	require.False(t, v.Shows)
	require.Contains(t, v.Reason, "no longer violates own-release")

	demo2, err := os.ReadFile("redis-cad-none-plain--exclusive.txt")
	require.NoError(t, err)
	claim := strings.Replace(string(demo2), "property:     exclusive", "property:     own-release", 1)
	f, err = Parse(claim)
	require.NoError(t, err)
	v = f.Replay()
	require.False(t, v.Shows)
	require.Contains(t, v.Reason, "no longer violates own-release (it violates exclusive at step")

	// and a stale readable section is noticed
	f, err = Parse(strings.Replace(good, "--- outcome ---\ncounter", "--- outcome ---\nkounter", 1))
	require.NoError(t, err)
	require.True(t, f.Replay().Shows)
	stale, err := f.Stale()
	require.NoError(t, err)
	require.Equal(t, []string{"outcome"}, stale)
}

// TestWriteIsAtomicAndReadsBack writes a counterexample found by explore,
// as `explore check -out DIR` does, and reads it back.
func TestWriteIsAtomicAndReadsBack(t *testing.T) {
	d, err := model.ParseDesign("redis/get-del/none/plain,work=1")
	require.NoError(t, err)
	rep, err := explore.Check(explore.Config{Design: d, Bounds: SearchBounds})
	require.NoError(t, err)
	res, ok := rep.Result("own-release")
	require.True(t, ok)
	require.Equal(t, explore.Violated, res.Status)

	dir := t.TempDir()
	p, err := Write(dir, d, "own-release", res.Trace, BoundsText(d, SearchBounds))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "redis-get-del-none-plain_work-1--own-release.txt"), p)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{
		"redis-get-del-none-plain_work-1--own-release-porcupine.html",
		"redis-get-del-none-plain_work-1--own-release.html",
		"redis-get-del-none-plain_work-1--own-release.txt",
	}
	require.Equal(t, want, names, "no temporary files left behind")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	f, err := Parse(string(data))
	require.NoError(t, err)
	require.True(t, f.Replay().Shows)
	require.Equal(t, "go run ./cmd/explore check -design redis/get-del/none/plain,work=1 -out "+filepath.ToSlash(dir), f.Regenerate)

	// a trace that does not violate the property writes nothing
	_, err = Write(dir, d, "exclusive", res.Trace[:3], "x")
	require.ErrorContains(t, err, "does not violate exclusive")
	_, err = Write(dir, d, "contended", res.Trace, "x")
	require.ErrorContains(t, err, "want an always property")
	entries, _ = os.ReadDir(dir)
	require.Len(t, entries, len(want))

	// a rename that fails (the target is a folder) leaves no temporary file
	target := filepath.Join(dir, "blocked.txt")
	require.NoError(t, os.Mkdir(target, 0o755))
	require.Error(t, WriteFileAtomic(target, []byte("x")))
	entries, _ = os.ReadDir(dir)
	require.Len(t, entries, len(want)+1)
}

// TestRegenCheckFindsEveryDifference runs Regen on a copy of the folder
// with one file edited, one removed and one extra: -check lists all three
// and writes nothing; without -check they are fixed.
func TestRegenCheckFindsEveryDifference(t *testing.T) {
	outs := Outputs(generatedNow(t))
	dir := t.TempDir()
	for _, o := range outs {
		require.NoError(t, os.WriteFile(filepath.Join(dir, o.Name), o.Data, 0o644))
	}
	diffs, err := syncDir(dir, outs, true)
	require.NoError(t, err)
	require.Empty(t, diffs)

	edited, removed := outs[1].Name, outs[2].Name
	require.True(t, strings.HasSuffix(edited, ".html"), edited)
	editedText := string(outs[1].Data) + "edited\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, edited), []byte(editedText), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, removed)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "old--exclusive.txt"), []byte(Magic+"\nx"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "user--exclusive.txt"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.go"), []byte("x"), 0o644))
	diffs, err = syncDir(dir, outs, true)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{edited + ": changed", removed + ": missing", "old--exclusive.txt: not generated"}, diffs)
	data, _ := os.ReadFile(filepath.Join(dir, edited))
	require.Equal(t, editedText, string(data), "-check writes nothing")

	_, err = syncDir(dir, outs, false)
	require.NoError(t, err)
	diffs, err = syncDir(dir, outs, true)
	require.NoError(t, err)
	require.Empty(t, diffs)
	_, err = os.Stat(filepath.Join(dir, "notes.go"))
	require.NoError(t, err, "files Regen does not make are left alone")
	_, err = os.Stat(filepath.Join(dir, "user--exclusive.txt"))
	require.NoError(t, err, "a .txt that is not a counterexample is left alone")

	_, err = Regen(filepath.Join(dir, "nope"), displayDir, true)
	require.ErrorContains(t, err, "not found")
}

func TestFileBase(t *testing.T) {
	for name, want := range map[string]string{
		"redis/del/none/plain": "redis-del-none-plain--own-release",
		"demo4":                "redis-del-none-plain_pauses-0_slow-1--own-release",
		"redis/cad/none/plain,acquire=set-expire": "redis-cad-none-plain_acquire-set-expire--own-release",
	} {
		d, err := model.ParseDesign(name)
		require.NoError(t, err)
		require.Equal(t, want, FileBase(d, "own-release"))
	}
}

// FuzzParse: no input makes Parse panic; an error always names a line
// within the file (or just after it); a file that parses has a trace that
// model.Replay accepts or refuses without panicking.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("*.txt")
	for _, name := range files[:min(3, len(files))] {
		data, err := os.ReadFile(name)
		if err == nil {
			f.Add(string(data))
			f.Add(string(data[:len(data)/2]))
		}
	}
	f.Add(Magic + "\ndesign: demo2\nproperty: exclusive\n--- steps ---\ndesign demo2\nA acquire\ntick 3\n--- end ---\n")
	f.Add(Magic + "\n--- end ---\n")
	f.Fuzz(func(t *testing.T, text string) {
		file, err := Parse(text)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a *ParseError: %v", err)
			}
			n := strings.Count(text, "\n") + 2
			if pe.Line < 1 || pe.Line > n {
				t.Fatalf("line %d outside the file (%d lines): %v", pe.Line, n, err)
			}
			return
		}
		if len(file.Trace) != len(file.stepLines) {
			t.Fatalf("%d steps, %d step lines", len(file.Trace), len(file.stepLines))
		}
		if len(file.Trace) <= 400 {
			v := file.Replay()
			if !v.Shows && v.Reason == "" {
				t.Fatal("no reason given")
			}
		}
	})
}

// TestCleanStaleTemps removes the temporary files of writers that have gone
// and keeps those of a live one and every other file: a user's own files
// named like a temporary file of a writer that has gone (no tag, a wrong
// tag) too.
func TestCleanStaleTemps(t *testing.T) {
	dir := t.TempDir()
	live := TempFileName("a.txt", os.Getpid(), 1)
	gone := TempFileName("a.txt", 999999999, 42)
	keep := []string{live, ".a.txt.tmp-123", "a.txt", "notes.tmp-999999999-1",
		".a.txt.tmp-999999999-42", // a user's file, named as before the tag
		".b.txt.tmp-999999999-42" + gone[len(".a.txt.tmp-999999999-42"):], // another file's tag
		gone + "0", gone[:len(gone)-1]}
	require.Regexp(t, `^\.a\.txt\.tmp-999999999-42-[0-9a-f]{16}$`, gone)
	for _, n := range append(keep, gone, TempFileName("x.html", 999999998, 0)) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o644))
	}
	CleanStaleTemps(dir)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, keep, names)
}
