package model

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// replayDemo loads demo n and replays its scenario through the model, with
// the design optionally changed (a planted bug).
func replayDemo(t *testing.T, n int, change func(*Design)) (*Run, error) {
	t.Helper()
	dm, err := LoadDemo(fmt.Sprint(n))
	require.NoError(t, err)
	d := dm.Scenario.Design
	if change != nil {
		change(&d)
	}
	return Replay(&d, dm.Scenario.Trace)
}

// stepAt finds the first step of client c doing kind at tick, or nil.
func stepAt(r *Run, c int, kind ActionKind, tick int) *StepRecord {
	for k := range r.Steps {
		st := &r.Steps[k]
		if st.Action.Kind == kind && int(st.Action.Client) == c && int(st.Event.Now) == tick {
			return st
		}
	}
	return nil
}

const (
	A = 0
	B = 1
	C = 2
)

// demoChecks are the seed's outcomes, one function per demo. Each returns
// the list of what does not hold, so that a planted bug can be shown to
// break them.
var demoChecks = map[int]func(r *Run) []string{
	1: func(r *Run) []string {
		var bad []string
		if r.Final.Store.Counter != 3 {
			bad = append(bad, fmt.Sprintf("counter %d, want 3", r.Final.Store.Counter))
		}
		for _, tr := range r.Timeline {
			if tr.Unsafe != 0 {
				bad = append(bad, fmt.Sprintf("✗ at t=%d", tr.Tick))
			}
		}
		if _, v := r.Violated("exclusive"); v {
			bad = append(bad, "exclusive violated")
		}
		return bad
	},
	2: func(r *Run) []string {
		var bad []string
		if st := stepAt(r, A, ActPause, 1); st == nil || int(st.Action.Arg) != 14 {
			bad = append(bad, "A is not frozen at t=1 for 14 ticks")
		}
		if st := stepAt(r, A, ActWrite, 15); st == nil || st.Event.Flags&EvUnsafe == 0 || st.Event.Value != 1 {
			bad = append(bad, "A does not write counter = 1 without the key at t=15 (✗)")
		}
		bad = append(bad, expiryAt11(r)...)
		if st := stepAt(r, B, ActAcquire, 11); st == nil || st.Event.Result != ResOK {
			bad = append(bad, "B does not take the lock at t=11")
		}
		if st := stepAt(r, B, ActWrite, 13); st == nil || st.Event.Value != 1 || st.Event.Result != ResAccepted {
			bad = append(bad, "B does not write counter = 1")
		}
		if r.Final.Store.Counter != 2 || r.Final.Store.Accepted != 3 {
			bad = append(bad, fmt.Sprintf("counter %d after %d accepted writes, want 2 after 3", r.Final.Store.Counter, r.Final.Store.Accepted))
		}
		if _, v := r.Violated("no-lost-update"); !v {
			bad = append(bad, "no-lost-update not violated")
		}
		return bad
	},
	3: func(r *Run) []string {
		var bad []string
		bad = append(bad, tokens(r, 33, 34, 35)...)
		st := stepAt(r, A, ActWrite, 15)
		if st == nil || st.Event.Result != ResRejected || st.Event.Token != 33 || st.Event.MaxTok != 34 {
			bad = append(bad, "A's write at t=15 is not rejected 33 < 34")
		}
		if r.Final.Store.Counter != 2 || r.Final.Store.Accepted != 2 {
			bad = append(bad, fmt.Sprintf("counter %d after %d accepted writes, want 2 after 2", r.Final.Store.Counter, r.Final.Store.Accepted))
		}
		if _, v := r.Violated("no-lost-update"); v {
			bad = append(bad, "no-lost-update violated")
		}
		return bad
	},
	4: func(r *Run) []string {
		var bad []string
		var removed []string
		for _, st := range r.Steps {
			if st.Event.Flags&EvRemovedOther != 0 {
				removed = append(removed, fmt.Sprintf("%s deletes %s's lock", ClientName(int(st.Action.Client)), ClientName(int(st.Event.Other-1))))
			}
		}
		if strings.Join(removed, ", ") != "A deletes B's lock, B deletes C's lock" {
			bad = append(bad, "releases: "+strings.Join(removed, ", ")+", want A deletes B's lock, B deletes C's lock")
		}
		if st := stepAt(r, C, ActAcquire, 13); st == nil || st.Event.Result != ResOK || st.Before.KeyOwner(0) != -1 {
			bad = append(bad, "C does not get in at t=13 after A deleted B's lock")
		}
		if r.Final.Store.Counter != 2 || r.Final.Store.Accepted != 3 {
			bad = append(bad, fmt.Sprintf("counter %d after %d accepted writes, want 2 after 3", r.Final.Store.Counter, r.Final.Store.Accepted))
		}
		return bad
	},
	5: func(r *Run) []string {
		var bad []string
		st := stepAt(r, A, ActWrite, 13)
		if st == nil || st.Event.Flags&EvUnsafe == 0 || st.Before.KeyOwner(0) != B || st.Event.Result != ResAccepted {
			bad = append(bad, "A's write does not land at t=13 while B holds the lock")
		}
		if st := stepAt(r, A, ActRelease, 13); st == nil || st.Event.Result != ResNoop || st.After.KeyOwner(0) != B {
			bad = append(bad, "A's check-and-delete does not leave B's key alone")
		}
		if _, v := r.Violated("own-release"); v {
			bad = append(bad, "own-release violated with check-and-delete")
		}
		if r.Final.Store.Counter != 2 || r.Final.Store.Accepted != 3 {
			bad = append(bad, fmt.Sprintf("counter %d after %d accepted writes, want 2 after 3", r.Final.Store.Counter, r.Final.Store.Accepted))
		}
		return bad
	},
	6: func(r *Run) []string {
		var bad []string
		bad = append(bad, tokens(r, 33, 34, 35)...)
		if st := stepAt(r, B, ActRead, 11); st == nil || st.Event.Token != 34 || st.Event.Result != ResAccepted {
			bad = append(bad, "B does not read with 34 at t=11")
		}
		aw := stepAt(r, A, ActWrite, 12)
		bw := stepAt(r, B, ActWrite, 13)
		if aw == nil || aw.Event.Result != ResRejected || aw.Event.Token != 33 || aw.Event.MaxTok != 34 {
			bad = append(bad, "A's late write is not rejected 33 < 34")
		}
		if aw != nil && bw != nil && aw.Seq > bw.Seq {
			bad = append(bad, "A's write is not before B's write")
		}
		if r.Final.Store.Counter != 2 || r.Final.Store.Accepted != 2 {
			bad = append(bad, fmt.Sprintf("counter %d after %d accepted writes, want 2 after 2", r.Final.Store.Counter, r.Final.Store.Accepted))
		}
		return bad
	},
}

// expiryAt11: A's key lives t=1..10 and is gone at t=11.
func expiryAt11(r *Run) []string {
	for _, st := range r.Steps {
		if st.Action.Kind == ActTick && st.Event.ExpiredMask&(1<<A) != 0 {
			if st.Event.Now != 11 || st.Event.Flags&EvExpiredHeld == 0 {
				return []string{fmt.Sprintf("A's key gone at t=%d, want t=11 while A believes", st.Event.Now)}
			}
			return nil
		}
	}
	return []string{"A's key never expires"}
}

// tokens: the lock grants hand out the given tokens, in order.
func tokens(r *Run, want ...int) []string {
	var got []int
	for _, st := range r.Steps {
		if st.Action.Kind == ActAcquire && st.Event.Result == ResOK && st.Event.Token != 0 {
			got = append(got, int(st.Event.Token))
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return []string{fmt.Sprintf("tokens %v, want %v", got, want)}
	}
	return nil
}

func TestDemosTellTheSeedsStory(t *testing.T) {
	for n := 1; n <= 6; n++ {
		t.Run(fmt.Sprint("demo", n), func(t *testing.T) {
			r, err := replayDemo(t, n, nil)
			require.NoError(t, err)
			require.Empty(t, demoChecks[n](r))
			require.True(t, r.Final.Finished(&r.Design), "every job ends")
		})
	}
}

// Test the tester: each planted bug breaks at least one demo's story, either
// because the scenario no longer replays or because an outcome changes (the
// demos' Go checks, or any scenario's expect lines).
func TestPlantedBugsBreakTheDemos(t *testing.T) {
	for b := BugSetWithoutNX; b < numBugs; b++ {
		t.Run(b.String(), func(t *testing.T) {
			var broken []string
			for n := 1; n <= 6; n++ {
				r, err := replayDemo(t, n, func(d *Design) { d.Bug = b })
				switch {
				case err != nil:
					broken = append(broken, fmt.Sprintf("demo%d: %v", n, err))
				default:
					for _, p := range demoChecks[n](r) {
						broken = append(broken, fmt.Sprintf("demo%d: %s", n, p))
					}
				}
			}
			for _, name := range ScenarioNames() {
				dm, err := LoadDemo(name)
				require.NoError(t, err)
				d := dm.Scenario.Design
				d.Bug = b
				r, err := Replay(&d, dm.Scenario.Trace)
				if err != nil {
					broken = append(broken, fmt.Sprintf("%s: %v", name, err))
					continue
				}
				for _, p := range dm.Scenario.CheckExpect(r) {
					broken = append(broken, name+": "+p)
				}
			}
			require.NotEmpty(t, broken, "bug %s went unnoticed by every demo", b)
			t.Logf("bug %s: %s", b, broken[0])
		})
	}
}

func TestDemoTimelineRows(t *testing.T) {
	r, err := replayDemo(t, 2, nil)
	require.NoError(t, err)
	tl := RenderTimeline(r)
	lines := strings.Split(strings.TrimRight(tl, "\n"), "\n")
	require.Len(t, lines, 7, "six rows and the legend:\n%s", tl)
	for k, label := range []string{"tick", "believes", "key", "counter", "accepted", "unsafe"} {
		require.True(t, strings.HasPrefix(lines[k], label+" "), "row %d is %s:\n%s", k, label, tl)
	}
	require.Contains(t, lines[5], "✗A")
	// ✗ stands under tick 15, and the storage ends with counter 2 after 3 accepted writes
	col := strings.Index(lines[0], " 15")
	require.Greater(t, col, 0)
	require.Equal(t, "✗A", strings.TrimSpace(string([]rune(lines[5])[col:])))
	require.True(t, strings.HasSuffix(lines[3], " 2"), lines[3])
	require.True(t, strings.HasSuffix(lines[4], " 3"), lines[4])
	steps := RenderSteps(r)
	require.Contains(t, steps, "t=11 B: SET lock:order-42 B:91ab NX PX 10000 → OK")
	require.Contains(t, steps, "t=15 A: write counter = 1 → accepted  ✗ the key is C's")
}

func TestDemo1HasNoCross(t *testing.T) {
	r, err := replayDemo(t, 1, nil)
	require.NoError(t, err)
	require.NotContains(t, Render(r), "✗")
}

func TestUnknownDemo(t *testing.T) {
	for _, arg := range []string{"0", "7", "demo9", "x", ""} {
		_, err := LoadDemo(arg)
		require.Error(t, err)
		require.NotContains(t, err.Error(), "\n")
		require.Contains(t, err.Error(), "allowed: 1 to 6")
	}
}

// Every scenario file replays through the model and shows what its
// expect lines claim.
func TestScenarioFilesKeepTheirPromises(t *testing.T) {
	names := ScenarioNames()
	require.GreaterOrEqual(t, len(names), 16)
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			dm, err := LoadDemo(n)
			require.NoError(t, err)
			require.NotEmpty(t, dm.Scenario.Expect, "a scenario says what it shows")
			require.NotEmpty(t, dm.Title)
			r, err := Replay(&dm.Scenario.Design, dm.Scenario.Trace)
			require.NoError(t, err)
			require.Empty(t, dm.Scenario.CheckExpect(r))
			again, err := ParseScenario(dm.Scenario.Format())
			require.NoError(t, err)
			require.Equal(t, dm.Scenario.Trace, again.Trace)
		})
	}
}

// storage-loses=fence: the same story with the whole row replicated
// asynchronously (the default) loses B's accepted write in the failover;
// with only the token check's state lost, B's write survives and A's
// stale write, let in by the lost token, overwrites it.
func TestStorageLosesOnlyTheFence(t *testing.T) {
	dm, err := LoadDemo("storage-failover-fence")
	require.NoError(t, err)
	d := dm.Scenario.Design
	require.Equal(t, LossFence, d.StorageLoses)
	r, err := Replay(&d, dm.Scenario.Trace)
	require.NoError(t, err)
	fo := r.Steps[len(r.Steps)-4]
	require.Equal(t, ActStorageFailover, fo.Action.Kind)
	require.Equal(t, uint8(1), fo.After.Store.Counter, "B's write survives the failover")
	require.Equal(t, uint16(1), fo.After.Store.MaxTok, "token 2 is lost")
	last := r.Steps[len(r.Steps)-1].After.Store
	require.Equal(t, uint8(1), last.Counter)
	require.Equal(t, uint8(2), last.Accepted)

	d.StorageLoses = LossUnsynced
	r, err = Replay(&d, dm.Scenario.Trace)
	require.NoError(t, err)
	fo = r.Steps[len(r.Steps)-4]
	require.Equal(t, uint8(0), fo.After.Store.Counter, "the replica had not received B's write")
}

// fence-check=two-step: the story's A passes its token check at t=3 and
// writes at t=15, after B's check and write with token 2: its write lands
// unchecked and an update is lost. The same schedule with the check and
// the write as one step (every write dropped, every apply a write: A
// pauses before its write) has A's token refused at t=15.
func TestTwoStepFenceLetsTheLateWriteIn(t *testing.T) {
	dm, err := LoadDemo("two-step-fence")
	require.NoError(t, err)
	d := dm.Scenario.Design
	require.Equal(t, FenceCheckTwoStep, d.FenceCheck)
	r, err := Replay(&d, dm.Scenario.Trace)
	require.NoError(t, err)
	last := &r.Steps[len(r.Steps)-2]
	require.Equal(t, Action{Kind: ActApply, Client: 0}, last.Action)
	require.Equal(t, ResAccepted, last.Event.Result)
	require.Equal(t, uint16(2), last.Before.Store.MaxTok, "B's token 2 was seen before A's write")
	require.NotZero(t, last.Event.Flags&EvUnsafe)
	require.Equal(t, uint8(1), last.After.Store.Counter)
	require.Equal(t, uint8(2), last.After.Store.Accepted)

	d.FenceCheck = FenceCheckAtomic
	var atomic []Action
	for _, a := range dm.Scenario.Trace {
		switch a.Kind {
		case ActWrite:
			continue
		case ActApply:
			a.Kind = ActWrite
		}
		atomic = append(atomic, a)
	}
	r, err = Replay(&d, atomic)
	require.NoError(t, err)
	late := &r.Steps[len(r.Steps)-2]
	require.Equal(t, Action{Kind: ActWrite, Client: 0}, late.Action)
	require.Equal(t, ResRejected, late.Event.Result, "checked at the write, token 1 < 2 is refused")
	end := r.Steps[len(r.Steps)-1].After.Store
	require.Equal(t, uint8(1), end.Counter)
	require.Equal(t, uint8(1), end.Accepted)
}

// A client between its token check and its write holds the lock in its
// own eyes: it is in its critical section, not inside a lock request
// (bypass counts only those, fairness.go's trying), and a failed renewal
// (renew-fail=stop) gives the job up before the write.
func TestApplyPhaseIsInsideTheCriticalSection(t *testing.T) {
	d, err := ParseDesign("redis/cad/rw/max-token,fence-check=two-step,clients=2,bypass=1")
	require.NoError(t, err)
	c := Client{Phase: PhaseApply, Flags: FlagBelieves | FlagStarted, Token: 1}
	require.True(t, c.Live())
	require.True(t, c.InCriticalSection())
	require.False(t, trying(&d, &c))
	require.Equal(t, ActApply, c.Next(&d))
	c.Flags &^= FlagBelieves // even one that no longer believes is not asking for the lock
	require.False(t, trying(&d, &c))

	d, err = ParseDesign("redis/cad/rw/max-token,fence-check=two-step,renew=3,renew-fail=stop")
	require.NoError(t, err)
	c = Client{Phase: PhaseApply, Flags: FlagBelieves | FlagStarted, Token: 1}
	require.Equal(t, EvGiveUp, c.stopWorker())
	require.Equal(t, PhaseRelease, c.Phase)
}
