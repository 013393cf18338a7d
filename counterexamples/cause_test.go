package counterexamples

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/explore"
	"lockcheck/model"
)

func shortest(t *testing.T, name, property string) (model.Design, []model.Action) {
	t.Helper()
	d, err := model.ParseDesign(name)
	require.NoError(t, err)
	p, _ := model.PropertyByName(property)
	rep, err := explore.Check(explore.Config{Design: d, Properties: []model.Property{p}, Bounds: SearchBounds})
	require.NoError(t, err)
	require.Equal(t, explore.Violated, rep.Results[0].Status, name)
	return d, rep.Results[0].Trace
}

// TestFaultsTellNecessaryFromIdle plants a fault the violation does not
// need into Demo 2's lost update (the lock node's clock jumps before any
// key exists): the planted jump is found not needed, the pause necessary.
// And when either of two faults would do, neither is needed alone.
func TestFaultsTellNecessaryFromIdle(t *testing.T) {
	_, trace := shortest(t, "redis/cad/none/plain,clients=2", "no-lost-update")
	d, err := model.ParseDesign("redis/cad/none/plain,clients=2,jumps=1,jump=1")
	require.NoError(t, err)
	faults := Faults(d, trace, "no-lost-update")
	require.Len(t, faults, 1)
	require.True(t, faults[0].Necessary)
	require.Equal(t, model.ActPause, faults[0].Action.Kind)

	// the first place where a one-tick clock jump leaves the trace intact
	jump := model.Action{Kind: model.ActClockJump, Arg: 0}
	var planted []model.Action
	for k := range trace {
		try := append(append(append([]model.Action{}, trace[:k]...), jump), trace[k:]...)
		if run, err := model.Replay(&d, try); err == nil {
			if _, ok := run.Violated("no-lost-update"); ok {
				planted = try
				break
			}
		}
	}
	require.NotNil(t, planted, "somewhere a one-tick jump changes nothing")
	faults = Faults(d, planted, "no-lost-update")
	require.Len(t, faults, 2)
	for _, f := range faults {
		if f.Action == jump {
			require.False(t, f.Necessary, "the planted jump is not needed")
		} else {
			require.True(t, f.Necessary, "the pause that outlives the key is")
		}
	}

	d, trace = shortest(t, "redlock/cad/none/plain,pauses=0,jumps=2,jump=9,clients=2", "exclusive")
	faults = Faults(d, trace, "exclusive")
	require.Len(t, faults, 2)
	require.False(t, faults[0].Necessary || faults[1].Necessary, "either jump alone does it: %v", faults)
	run, err := model.Replay(&d, trace)
	require.NoError(t, err)
	at, _ := run.Violated("exclusive")
	require.Contains(t, Cause(run, "exclusive", at, faults), "(no one of them alone is needed)")
}

// TestFewestClients: Demo 3's lost update needs two clients (the issue's
// example: three tell it in 17 story lines, two in 12); a client acting on
// an expired key needs one; a design that needs all its clients says so.
func TestFewestClients(t *testing.T) {
	d, _ := model.ParseDesign("demo3")
	dn, trace, ok, err := FewestClients(d, "no-lost-update", SearchBounds)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 2, dn.Clients)
	run, err := model.Replay(&dn, trace)
	require.NoError(t, err)
	require.Equal(t, 12, strings.Count(model.RenderSteps(run), "\n"), "the story of the two-client lost update")

	dn, _, ok, err = FewestClients(d, "exclusive", SearchBounds)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 1, dn.Clients)

	d, _ = model.ParseDesign("redis/del/none/plain,clients=2,pauses=0,slow=1")
	_, _, ok, err = FewestClients(d, "own-release", SearchBounds)
	require.NoError(t, err)
	require.False(t, ok, "one client cannot remove another's lock")
}

// TestCauseSentences: the cause names the fault, the expiry, and why the
// storage accepted the stale write, with the highest token it had seen.
func TestCauseSentences(t *testing.T) {
	for _, c := range []struct{ design, property, want string }{
		{"demo3,clients=2", "no-lost-update", "A paused for 10 ticks at t=1: A's key expired at t=11 while A still believed it held the lock; A and B both read 0 and both wrote 1, so one increment is lost: A's write at t=11 (its lock already gone) with token 33, which the storage accepted because B's read carried no token (highest token seen: 0)."},
		{"demo2,clients=1", "exclusive", "A paused for 10 ticks at t=1: A's key expired at t=11 while A still believed it held the lock; A read the counter at t=11 while the lock was nobody's, which the storage accepted: it checks nothing."},
		{"redis/cad/none/plain,clients=1,renew=3", "exclusive", "(its watchdog, due every 3 ticks, was frozen with it)"},
		{"demo4,clients=2", "own-release", "A's job was slow (12 ticks of work): A's key expired at t=11 while A still believed it held the lock; A's release removed the key of B, who still held it."},
		{"redis/cad/none/plain,clients=2,pauses=0,reenter=nx", "no-lost-update", "With no fault: "},
		{"demo6,clients=2", "mutex", "A and B believed they held the lock at once at t=11"},
		{"redis/cad/rw/max-token,acquire=set-expire,pauses=0,crashes=1,clients=2", "progress", "A crashed for good at t=1; the key is A's, it never expires, and A will never release it."},
	} {
		d, trace := shortest(t, c.design, c.property)
		run, err := model.Replay(&d, trace)
		require.NoError(t, err)
		at, _ := run.Violated(c.property)
		got := Cause(run, c.property, at, Faults(d, trace, c.property))
		require.Contains(t, got, c.want, c.design)
		require.Equal(t, 1, strings.Count(got, "."+""), "one sentence: %q", got)
	}
}

// TestEveryFileSaysWhyAndWhatPrevents: every checked-in counterexample has
// its cause sentence, its clients line and its prevented section, and the
// first design the section suggests really keeps the property (checked
// afresh here, not read from the search that suggested it).
func TestEveryFileSaysWhyAndWhatPrevents(t *testing.T) {
	files := checkedInFiles(t)
	require.NotEmpty(t, files)
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := Parse(string(data))
		require.NoError(t, err, name)
		require.NotEmpty(t, f.Cause, name)
		require.True(t, strings.HasSuffix(f.Cause, "."), name)
		require.NotEmpty(t, f.Clients, name)
		require.NotEmpty(t, f.Sections[secWhy], name)
		prevented := f.Sections[secPrevented]
		require.NotEmpty(t, prevented, name)
		if model.ClassOf(f.Property) == model.Fairness {
			// bypass: the same design on the two queues, each searched again here
			queues := 0
			for _, line := range strings.Split(prevented, "\n") {
				design, verdict, ok := strings.Cut(strings.TrimSpace(line), ": bypass ")
				if !ok {
					continue
				}
				q, err := model.ParseDesign(design)
				require.NoError(t, err, name)
				rep, err := explore.Check(explore.Config{Design: q, Properties: []model.Property{model.Bypass}, Bounds: SearchBounds})
				require.NoError(t, err)
				require.Equal(t, strings.HasPrefix(verdict, "holds"), rep.Results[0].Status == explore.Holds, "%s: %s", name, line)
				queues++
			}
			require.Equal(t, 2, queues, name)
			continue
		}
		// a lock property no neighbour keeps: the section says so, and
		// the designs it lists keep the data safe instead
		noLock := strings.HasPrefix(prevented, "no design within ")
		if noLock {
			require.Contains(t, prevented, "no\nlease-based lock stays exclusive against a pause longer than its lease", name)
			require.Contains(t, prevented, "Only the storage can refuse the late write", name)
		}
		_, rest, ok := strings.Cut(prevented, "\n  1. ")
		if !ok {
			if !noLock {
				require.Contains(t, prevented, "none within", name)
			}
			continue
		}
		lines := strings.Split(rest, "\n")
		fix, err := model.ParseDesign(strings.TrimSpace(lines[1]))
		require.NoError(t, err, name)
		p, _ := model.PropertyByName(f.Property)
		if noLock {
			p, _ = model.PropertyByName("no-lost-update")
		}
		done, _ := model.PropertyByName("all-done")
		rep, err := explore.Check(explore.Config{Design: fix, Properties: []model.Property{p, done}, Bounds: SearchBounds})
		require.NoError(t, err)
		require.Equal(t, explore.Holds, rep.Results[0].Status, "%s: the suggested %s", name, fix.Name())
		require.Empty(t, rep.Results[0].Vacuous, "%s: the suggested %s is put to the test", name, fix.Name())
		require.Equal(t, explore.Seen, rep.Results[1].Status, "%s: the suggested %s finishes its jobs", name, fix.Name())
	}
}
