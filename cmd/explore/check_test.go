package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"lockcheck/counterexamples"
	"lockcheck/model"
)

func runCheckArgs(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(append([]string{"check"}, args...), &o, &e)
	return code, o.String(), e.String()
}

// timing is the text output's measured parts.
var timing = regexp.MustCompile(`(?m)^time: .*$`)

func TestCheckDemo2Violated(t *testing.T) {
	code, out, errs := runCheckArgs("-design", "demo2")
	// each violation is on stderr as soon as found, with the states so far
	seconds := regexp.MustCompile(`, [0-9.]+s\n`)
	if code != exitViolated || seconds.ReplaceAllString(errs, "\n") != "explore check: exclusive violated (31 steps) after 3,773 states\nexplore check: mutex violated (33 steps) after 4,141 states\nexplore check: no-lost-update violated (41 steps) after 4,992 states\n" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		"design redis/cad/none/plain (-design demo2)\n",
		"  exclusive           violated (31 steps; faults: pause)\n",
		"  own-release         holds (within bounds; faults used: pause)\n",
		"  no-lost-update      violated (41 steps; faults: pause)\n",
		"  fenced              not seen (faults used: pause)\n",
		"shortest counterexample for exclusive (31 steps):\n",
		"✗", // the timeline's unsafe row
		"also violated: mutex (33 steps), no-lost-update (41 steps)",
		"search: 5,324 distinct states, 7,568 transitions, depth 52, complete\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestCheckDemo6HoldsNoLostUpdate(t *testing.T) {
	code, out, _ := runCheckArgs("-design", "demo6", "-properties", "no-lost-update")
	if code != exitOK || !strings.Contains(out, "  no-lost-update      holds (within bounds; faults used: pause)\n") || strings.Contains(out, "counterexample") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// the same property with its planted storage bug is violated, and the
	// counterexample shown is the one for it
	code, out, _ = runCheckArgs("-design", "demo6,bug=read-no-record", "-properties", "no-lost-update")
	if code != exitViolated || !strings.Contains(out, "shortest counterexample for no-lost-update (41 steps)") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestCheckIncomplete(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-design", "demo6", "-max-states", "100"}, `no counterexample up to depth 4 \(100 states\)`},
		{[]string{"-design", "demo6", "-steps", "10"}, `no counterexample up to depth 10 \(446 states\)`},
		// (where memory stops it depends on the size of a state)
		{[]string{"-design", "redlock/cad/none/plain", "-clients", "4", "-max-memory", "64"}, `no counterexample up to depth \d+ \([0-9,]+ states\)`},
	} {
		code, out, _ := runCheckArgs(c.args...)
		if code != exitIncomplete || !regexp.MustCompile(`  no-lost-update      incomplete: `+c.want+`\n`).MatchString(out) || strings.Contains(out, "holds") {
			t.Errorf("%v: exit %d:\n%s", c.args, code, out)
		}
	}
}

// Flags override the design's numbers; the output is the same for any
// number of workers; symmetry changes the counts, not the verdicts.
func TestCheckFlagsWorkersSymmetry(t *testing.T) {
	args := []string{"-design", "redis/cad/rw/max-token,clock=free", "-horizon", "12", "-pauses", "1", "-max-pause", "5", "-clients", "2", "-crashes", "1", "-slow", "1"}
	code1, out1, _ := runCheckArgs(append(args, "-workers", "1")...)
	code2, out2, _ := runCheckArgs(append(args, "-workers", "3")...)
	if code1 != code2 || timing.ReplaceAllString(out1, "") != timing.ReplaceAllString(out2, "") {
		t.Fatalf("workers 1 and 3 differ:\n%s\n----\n%s", out1, out2)
	}
	if !strings.Contains(out1, "horizon 12 ticks, 2 clients, fault budget: 1 pause of up to 5 ticks, 1 slow job (work 12 ticks), 1 crash") {
		t.Errorf("flags not applied:\n%s", out1)
	}
	code3, out3, _ := runCheckArgs(append(args, "-symmetry=false")...)
	verdicts := regexp.MustCompile(`(?m)^  \S+ +.*$`)
	if code3 != code1 || strings.Join(verdicts.FindAllString(out3, -1), "\n") != strings.Join(verdicts.FindAllString(out1, -1), "\n") {
		t.Errorf("symmetry changed a verdict:\n%s\n----\n%s", out1, out3)
	}
}

func TestCheckJSON(t *testing.T) {
	code, out, _ := runCheckArgs("-design", "demo2", "-json", "-properties", "no-lost-update,own-release")
	if code != exitViolated {
		t.Fatalf("exit %d", code)
	}
	var got struct {
		Design string `json:"design"`
		Bounds struct {
			Horizon, Pauses, MaxPause, Clients int
			Symmetry                           bool
		} `json:"bounds"`
		Results []struct {
			Property, Status string
			TraceLength      *int `json:"trace_length"`
		} `json:"results"`
		Stats struct {
			Distinct, Transitions int64
			Depth                 int
			Seconds               float64
		} `json:"stats"`
		Counterexample *struct {
			Property string
			Steps    []string
		} `json:"counterexample"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if got.Design != "redis/cad/none/plain" || got.Bounds.Horizon != 40 || !got.Bounds.Symmetry || len(got.Results) != 2 ||
		got.Results[0].Status != "violated" || *got.Results[0].TraceLength != 41 || got.Results[1].Status != "holds" || got.Results[1].TraceLength != nil ||
		got.Stats.Distinct != 5324 || got.Counterexample == nil || got.Counterexample.Property != "no-lost-update" || len(got.Counterexample.Steps) != 41 {
		t.Fatalf("unexpected object:\n%s", out)
	}
	// the steps replay and show the property at the last one
	var trace []model.Action
	for _, s := range got.Counterexample.Steps {
		a, err := model.ParseAction(s)
		if err != nil {
			t.Fatal(err)
		}
		trace = append(trace, a)
	}
	d, _ := model.ParseDesign("demo2")
	r, err := model.Replay(&d, trace)
	if err != nil {
		t.Fatal(err)
	}
	if seq, ok := r.Violated("no-lost-update"); !ok || seq != 41 {
		t.Fatalf("replay shows no-lost-update at %d (%v)", seq, ok)
	}
	// deterministic but for the measured fields
	measured := regexp.MustCompile(`"(seconds|states_per_second|peak_memory_bytes)": [0-9.e+-]+`)
	_, again, _ := runCheckArgs("-design", "demo2", "-json", "-properties", "no-lost-update,own-release", "-workers", "2")
	if measured.ReplaceAllString(out, "") != measured.ReplaceAllString(again, "") {
		t.Fatalf("two runs differ:\n%s\n----\n%s", out, again)
	}
}

// A flag that lengthens a fault derives the horizon again, as the same
// parameter in the name does; a horizon given by flag or name stays.
func TestDesignFlagsRederive(t *testing.T) {
	for _, c := range []struct {
		args []string
		name string
	}{
		{[]string{"-design", "redis/cad/none/plain", "-max-pause", "30"}, "redis/cad/none/plain,max-pause=30"},
		{[]string{"-design", "redis/cad/none/plain", "-max-pause", "30", "-horizon", "50"}, "redis/cad/none/plain,max-pause=30,horizon=50"},
		{[]string{"-design", "redis/cad/none/plain,horizon=50", "-max-pause", "30"}, "redis/cad/none/plain,horizon=50,max-pause=30"},
		{[]string{"-design", "demo2", "-clients", "2"}, "demo2,clients=2"},
	} {
		a, _, _, err := parseCheckArgs(c.args)
		require.NoError(t, err, c.args)
		want, err := model.ParseDesign(c.name)
		require.NoError(t, err)
		assert.Equal(t, want, a.design, "%v", c.args)
	}
	a, _, _, err := parseCheckArgs([]string{"-design", "redis/cad/none/plain", "-max-pause", "30"})
	require.NoError(t, err)
	assert.Equal(t, 70, a.design.HorizonTicks, "horizon = ttl + 2 × the longest fault")
}

// Bad input: exit 2, one line on stderr naming the problem, nothing on
// stdout.
func TestCheckBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-design", "nope"}, `design "nope"`},
		{[]string{"-design", "demo2", "-horizon", "500"}, `horizon="500": want a whole number from 1 to 120`},
		{[]string{"-clients", "0"}, `clients="0": want a whole number from 1 to 8`},
		{[]string{"-max-pause", "0"}, `max-pause="0": want a whole number from 1 to 60`},
		{[]string{"-properties", "bogus"}, `unknown property "bogus"`},
		{[]string{"-workers", "-1"}, "-workers -1"},
		{[]string{"-workers", "1000"}, "-workers 1000"},
		{[]string{"-steps", "-1"}, "-steps -1"},
		{[]string{"-steps", "abc"}, "-steps"},
		{[]string{"-max-states", "-3"}, "-max-states -3"},
		{[]string{"-max-memory", "-5"}, "-max-memory -5"},
		{[]string{"-max-memory", "63"}, "-max-memory 63: want 0 (no limit) or 64 to"},
		{[]string{"-bits", "24"}, "-bits 24: only with -bitstate"},
		{[]string{"-frontier-dir", "/nonexistent/x"}, "-frontier-dir /nonexistent/x: not a folder"},
		{[]string{"-bitstate", "-bits", "19"}, "-bits 19: want 20 to 36"},
		{[]string{"-bitstate", "-bits", "37"}, "-bits 37: want 20 to 36"},
		{[]string{"-bitstate", "-compact"}, "-compact and -bitstate: choose one"},
		{[]string{"-bitstate", "-max-memory", "500"}, "-bits 32: the bit array (512 MB) does not fit in -max-memory 500"},
		{[]string{"-x"}, "-x"},
		{[]string{"extra"}, `"extra"`},
	} {
		code, out, errs := runCheckArgs(c.args...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "explore check: ") || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q (want one line with %q)", c.args, code, out, errs, c.want)
		}
	}
	code, out, _ := runCheckArgs("-h")
	if code != exitOK || !strings.Contains(out, "-max-memory") {
		t.Errorf("-h: exit %d:\n%s", code, out)
	}
}

// The flag parser never panics, and whatever it accepts is a valid design
// with sane bounds.
func FuzzCheckArgs(f *testing.F) {
	f.Add("-design demo2 -horizon 20 -pauses 1")
	f.Add("-design redis/cad/rw/max-token,clock=free -clients 4 -max-memory 100 -json")
	f.Add("-properties exclusive,fenced -workers 3 -symmetry=false -steps 7")
	f.Add("-max-states=-1 -h")
	f.Add("-design demo2,clients=2 -clients 3")
	f.Add("-clinets 2 -design redis/cad/none/plain,tll=5,renew=20")
	f.Fuzz(func(t *testing.T, line string) {
		a, help, _, err := parseCheckArgs(strings.Fields(line))
		if help || err != nil {
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("error has several lines: %q", err)
			}
			return
		}
		if err := a.design.Validate(); err != nil {
			t.Fatalf("accepted an invalid design: %v", err)
		}
		b := a.bounds
		if b.MaxSteps < 0 || b.MaxStates < 0 || b.MaxMemory < 0 || b.Workers < 0 || len(a.props) == 0 {
			t.Fatalf("accepted bounds %+v, %d properties", b, len(a.props))
		}
	})
}

// -out writes one counterexample file per violated property, and each file
// replays to its violation.
func TestCheckOutWritesReplayableFiles(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"check", "-design", "demo4", "-out", dir}, &out, &errb)
	require.Equal(t, exitViolated, code, errb.String())
	for _, prop := range []string{"exclusive", "own-release", "no-lost-update"} {
		d, err := model.ParseDesign("demo4")
		require.NoError(t, err)
		p := filepath.Join(dir, counterexamples.FileBase(d, prop)+".txt")
		require.Contains(t, out.String(), "wrote "+p)
		text, err := os.ReadFile(p)
		require.NoError(t, err)
		f, err := counterexamples.Parse(string(text))
		require.NoError(t, err)
		require.True(t, f.Replay().Shows, "%s no longer shows %s", p, prop)
	}
	// every file written is reported, and no file is reported twice
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var wrote []string
	for _, l := range strings.Split(out.String(), "\n") {
		if p, ok := strings.CutPrefix(l, "wrote "); ok {
			wrote = append(wrote, p)
		}
	}
	require.Len(t, wrote, len(entries), "reported %v", wrote)
	for _, e := range entries {
		require.Contains(t, wrote, filepath.Join(dir, e.Name()))
	}
	var out2, errb2 bytes.Buffer
	notADir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notADir, nil, 0o644))
	require.Equal(t, exitUsage, run([]string{"check", "-design", "demo4", "-out", filepath.Join(notADir, "x")}, &out2, &errb2))
	require.Empty(t, out2.String())
}

// A verdict that exercised nothing says so, in the text, in -json and in
// the exit code (4); a tested one does not.
func TestCheckVacuousVerdicts(t *testing.T) {
	code, out, _ := runCheckArgs("-design", "demo1")
	require.Equal(t, exitVacuous, code, out)
	require.Contains(t, out, "  no-lost-update      holds, vacuously: no lock expired or was lost while held; add a pause: pauses=1 and max-pause at least 8 (faults used: none)\n")

	code, out, _ = runCheckArgs("-design", "redis/cad/rw/max-token,max-pause=7", "-json")
	require.Equal(t, exitVacuous, code, out)
	var got struct {
		Results  []checkResJSON `json:"results"`
		Coverage checkCovJSON   `json:"coverage"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, []string{"pause"}, got.Coverage.FaultsUsed)
	require.False(t, got.Coverage.LockLostWhileHeld)
	for _, r := range got.Results {
		if r.Expect == "always" {
			require.True(t, r.Vacuous, r.Property)
			require.Contains(t, r.Vacuity, "raise max-pause to at least 8", r.Property)
			require.Equal(t, []string{"pause"}, r.Faults, r.Property)
		} else {
			require.False(t, r.Vacuous)
		}
	}

	code, out, _ = runCheckArgs("-design", "redis/cad/rw/max-token,max-pause=8", "-properties", "no-lost-update", "-json")
	require.Equal(t, exitOK, code, out)
	var tested struct {
		Results []checkResJSON `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &tested))
	require.False(t, tested.Results[0].Vacuous)
	require.Empty(t, tested.Results[0].Vacuity)
}

// A bitstate search never says a plain "holds": its verdict says
// probabilistic, how much the array is filled and how many states it is
// expected to have missed, and the exit code is 5, not 0; a planted bug is
// found with a counterexample that replays; the output is the same from run
// to run.
func TestCheckBitstate(t *testing.T) {
	args := []string{"-design", "demo6", "-properties", "no-lost-update", "-bitstate", "-bits", "24"}
	code, out, errs := runCheckArgs(args...)
	require.Equal(t, exitProbable, code, out+errs)
	require.Regexp(t, `  no-lost-update      holds \(probabilistic: bitstate search of 2\^24 bits, 3 per state, [0-9.]+% set; (under 1 state|about [0-9,]+ states) expected missed.*, and what only they lead to; not a proof; faults used: pause\)\n`, out)
	require.NotRegexp(t, `(?m)^  \S+ +holds \(within bounds`, out)
	_, again, _ := runCheckArgs(append(args, "-frontier-dir", t.TempDir())...)
	require.Equal(t, stripTiming(out), stripTiming(again), "same output from run to run, and with the frontier on disk")

	// a cramped array: states are missed, and the verdict says about how many
	code, out, _ = runCheckArgs("-design", "redis/cad/rw/max-token,clock=free,horizon=12", "-properties", "no-lost-update", "-bitstate", "-bits", "20", "-symmetry=false")
	require.Equal(t, exitProbable, code, out)
	require.Regexp(t, `holds \(probabilistic: bitstate search of 2\^20 bits, 3 per state, [0-9.]+% set; about [1-9][0-9,]* states expected missed \(coverage about [0-9.]+%\)`, out)

	// a planted bug: found, with a real trace
	dir := t.TempDir()
	code, out, _ = runCheckArgs("-design", "demo6,bug=no-token-check", "-properties", "no-lost-update,fenced", "-bitstate", "-bits", "24", "-json", "-out", dir)
	require.Equal(t, exitViolated, code, out)
	var got checkJSON
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, "violated", got.Results[0].Status)
	require.Contains(t, got.Results[0].Verdict, "replayed; a bitstate search may have missed a shorter one")
	require.Equal(t, "not-seen-probabilistic", got.Results[1].Status)
	require.Contains(t, got.Results[1].Verdict, "not seen (probabilistic: bitstate search of 2^24 bits")
	require.Equal(t, 24, got.Bounds.BitstateBits)
	require.NotNil(t, got.Stats.Bitstate)
	require.Equal(t, 3, got.Stats.Bitstate.Hashes)
	require.NotNil(t, got.Counterexample)
	d, err := model.ParseDesign("demo6,bug=no-token-check")
	require.NoError(t, err)
	var trace []model.Action
	for _, st := range got.Counterexample.Steps {
		a, err := model.ParseAction(st)
		require.NoError(t, err)
		trace = append(trace, a)
	}
	run, err := model.Replay(&d, trace)
	require.NoError(t, err)
	seq, ok := run.Violated("no-lost-update")
	require.True(t, ok)
	require.Equal(t, len(trace), seq)
	// the file does not claim a shortest trace, and replays
	require.Len(t, got.Files, 3, "the timeline page, porcupine's page and the text")
	require.True(t, strings.HasSuffix(got.Files[2], ".txt"), got.Files[2])
	text, err := os.ReadFile(got.Files[2])
	require.NoError(t, err)
	f, err := counterexamples.Parse(string(text))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(f.FoundBy, "bitstate breadth-first search (2^24 bits; a real trace, maybe not a shortest one), within bounds: "), f.FoundBy)
	code, _, errs = runCmd("replay", got.Files[2])
	require.Equal(t, exitOK, code, errs)
}

// stripTiming drops the lines that carry times and memory.
func stripTiming(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "time: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
