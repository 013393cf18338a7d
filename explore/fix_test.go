package explore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/model"
)

func fixOf(t *testing.T, name string, props string) *FixReport {
	t.Helper()
	d, err := model.ParseDesign(name)
	require.NoError(t, err)
	var ps []model.Property
	if props != "" {
		ps, err = model.ParseProperties(props)
		require.NoError(t, err)
	}
	// one change: every answer these tests ask for is one change away, and
	// a design no neighbour fixes (demo2) would search two
	rep, err := Fix(FixConfig{Design: d, Properties: ps, Bounds: Bounds{Symmetry: true}, MaxChanges: 1})
	require.NoError(t, err)
	return rep
}

// holdsIndependently checks a design afresh, with every property: each
// named always property holds, nothing the original satisfied breaks, and
// every job can finish.
func holdsIndependently(t *testing.T, d model.Design, props []string) {
	t.Helper()
	rep, err := Check(Config{Design: d, Bounds: Bounds{Symmetry: true}})
	require.NoError(t, err)
	for _, p := range props {
		r, ok := rep.Result(p)
		require.True(t, ok)
		require.Equal(t, Holds, r.Status, "%s: %s", d.Name(), p)
	}
	r, _ := rep.Result("all-done")
	require.Equal(t, Seen, r.Status, "%s: the jobs can finish", d.Name())
}

// A planted mistake with a known one-word fix: plain DEL removes another
// client's lock; the check-and-delete script (cost 1) must come first for
// own-release, and the suggested design must really hold.
func TestFixFindsTheKnownFix(t *testing.T) {
	rep := fixOf(t, "redis/del/none/plain,pauses=0,slow=1", "own-release")
	require.Equal(t, []string{"own-release"}, rep.Violated)
	require.NotEmpty(t, rep.Fixes)
	first := rep.Fixes[0]
	require.Equal(t, "release del → cad", first.ChangesText())
	require.Equal(t, 1, first.Cost)
	want := rep.Design
	want.Release = model.ReleaseCAD
	require.Equal(t, want, first.Design)
	holdsIndependently(t, first.Design, []string{"own-release"})
}

// Every suggestion holds when checked afresh, and no nearer or cheaper
// neighbour that holds was missed: each one-change neighbour cheaper than
// the first fix, checked afresh, breaks a chosen property, breaks a
// property the design kept, or cannot finish its jobs.
func TestFixSuggestionsHoldAndNoneCheaperMissed(t *testing.T) {
	for _, c := range []struct{ design, props string }{
		{"demo2", ""},
		{"demo3", "no-lost-update"},
		{"demo4", ""},
		{"zookeeper/cad/none/plain", ""},
		{"db/cad/none/plain,tx=outside", ""},
		{"replica/cad/rw/max-token,pauses=0", ""},
	} {
		t.Run(c.design, func(t *testing.T) {
			rep := fixOf(t, c.design, c.props)
			require.False(t, rep.Safe())
			if len(rep.Fixes) == 0 {
				// no design keeps the lock: the data-safe designs are the answer
				require.False(t, rep.LockKept(), "no fix, yet a neighbour keeps the lock")
				require.NotEmpty(t, rep.DataSafe, "every unsafe catalogue design has a fix or a data-safe design within one change")
				for i, f := range rep.DataSafe {
					if i < 3 {
						holdsIndependently(t, f.Design, rep.ViolatedOf(model.DataSafety))
					}
				}
				return
			}
			for i, f := range rep.Fixes {
				if i >= 3 {
					break
				}
				require.True(t, f.Real(), f.Name())
				holdsIndependently(t, f.Design, rep.Properties)
			}
			best := rep.Fixes[0]
			near, _ := Neighbours(rep.Design, 1)
			require.NotEmpty(t, near)
			for _, n := range near {
				if len(best.Changes) > 1 || n.Cost < best.Cost || (n.Cost == best.Cost && n.Name() < best.Name()) {
					r, err := Check(Config{Design: n.Design, Bounds: Bounds{Symmetry: true}})
					require.NoError(t, err)
					ok := true
					for _, p := range rep.Properties {
						if res, _ := r.Result(p); res.Status != Holds {
							ok = false
						}
					}
					if res, _ := r.Result("all-done"); res.Status != Seen {
						ok = false
					}
					for _, orig := range rep.Original.Results {
						if orig.Expect == model.Always && orig.Status == Holds {
							if res, _ := r.Result(orig.Property); res.Status != Holds {
								ok = false
							}
						}
					}
					if ok && vacuous(r, rep.Violated) {
						// a cheaper fix that holds only vacuously is no fix
						require.False(t, listed(rep.Fixes, n.Name()), "%s holds vacuously: it is no fix", n.Name())
						continue
					}
					require.False(t, ok, "%s holds and costs %d, less than the first fix %s (%d)", n.Name(), n.Cost, best.Name(), best.Cost)
				}
			}
		})
	}
}

// vacuous reports whether one of props holds only vacuously in r.
func vacuous(r *Report, props []string) bool {
	for _, p := range props {
		if res, _ := r.Result(p); res.Status == Holds && res.Vacuous != "" {
			return true
		}
	}
	return false
}

// listed reports whether the design named name is among cs.
func listed(cs []Candidate, name string) bool {
	for _, c := range cs {
		if c.Name() == name {
			return true
		}
	}
	return false
}

// A fix that holds only vacuously (no fault reached the fixed property)
// is never a fix: Fixes are all put to the test, storage-side protection
// first, and a longer TTL is checked against a pause that outlasts it by
// as much as before, so it breaks again (before, ttl 10 → 20 "fixed"
// demo3 against the same 15-tick pause, vacuously).
func TestFixNeverCountsAVacuousFix(t *testing.T) {
	d, err := model.ParseDesign("demo3")
	require.NoError(t, err)
	ps, err := model.ParseProperties("no-lost-update")
	require.NoError(t, err)
	rep, err := Fix(FixConfig{Design: d, Properties: ps, Bounds: Bounds{Symmetry: true}, MaxChanges: 1})
	require.NoError(t, err)
	require.NotEmpty(t, rep.Fixes)
	for i, f := range rep.Fixes {
		require.True(t, f.Real(), f.Name())
		require.Empty(t, f.Vacuous, f.Name())
		if i > 0 {
			require.LessOrEqual(t, rep.Fixes[i-1].Protection(), f.Protection(), "storage-side protection first")
		}
	}
	require.Equal(t, ProtectStorage, rep.Fixes[0].Protection())
	for _, f := range rep.Vacuous {
		require.NotEmpty(t, f.Vacuous, f.Name())
	}
	var ttl *Candidate
	for i := range rep.Leases {
		if rep.Leases[i].ChangesText() == "ttl 10 → 20" {
			ttl = &rep.Leases[i]
		}
	}
	require.NotNil(t, ttl, "the longer TTL was judged")
	require.Equal(t, 10, ttl.Grown)
	require.Equal(t, 25, ttl.Design.MaxPauseTicks, "the pause grew with the TTL")
	require.False(t, listed(rep.Fixes, ttl.Name()))
	r, _ := ttl.Result("no-lost-update")
	require.Equal(t, Violated, r.Status, "a pause that outlasts the longer TTL loses the update again")
	per := rep.PerProperty["no-lost-update"]
	require.NotEmpty(t, per)
	require.Equal(t, rep.Fixes[0].Name(), per[0].Name())
}

// demo2: no design within one change keeps the lock exclusive; the
// nearest data-safe design is the compare-and-set storage, a storage-side
// protection, and no lease change is among the answers.
func TestFixDemo2IsDataSafeOnly(t *testing.T) {
	d, err := model.ParseDesign("demo2")
	require.NoError(t, err)
	rep, err := Fix(FixConfig{Design: d, Bounds: Bounds{Symmetry: true}, MaxChanges: 1})
	require.NoError(t, err)
	require.Empty(t, rep.Fixes)
	require.False(t, rep.LockKept())
	require.Equal(t, []string{"no-lost-update"}, rep.ViolatedOf(model.DataSafety))
	require.Equal(t, []string{"exclusive", "mutex"}, rep.ViolatedOf(model.LockSafety))
	require.NotEmpty(t, rep.DataSafe)
	require.Equal(t, "storage plain → cas", rep.DataSafe[0].ChangesText())
	for _, c := range rep.DataSafe {
		require.NotEqual(t, ProtectLease, c.Protection(), c.Name())
	}
	require.NotEmpty(t, rep.Leases)
	for _, c := range rep.Leases {
		require.False(t, c.Holds, "%s: a lease change fixes no pause", c.Name())
	}
}

// A neighbour whose search stopped once it broke every property its
// design breaks really breaks them all (checked afresh), so it fixes
// nothing: stopping lost no fix.
func TestFixStopsNeighboursThatFixNothing(t *testing.T) {
	rep := fixOf(t, "demo2", "")
	stopped := 0
	for _, c := range rep.Checked {
		if !c.Stopped {
			continue
		}
		require.Empty(t, c.Fixes, c.Name())
		require.False(t, c.Undecided(), c.Name())
		if stopped++; stopped > 3 {
			continue
		}
		r, err := Check(Config{Design: c.Design, Bounds: Bounds{Symmetry: true}})
		require.NoError(t, err)
		for _, v := range rep.Violated {
			res, _ := r.Result(v)
			require.Equal(t, Violated, res.Status, "%s: %s", c.Name(), v)
		}
	}
	require.NotZero(t, stopped, "demo2 has neighbours that fix nothing")
}

func TestFixSafeDesignSaysSo(t *testing.T) {
	rep := fixOf(t, "demo1", "")
	require.True(t, rep.Safe())
	require.Empty(t, rep.Checked, "a safe design searches no neighbour")
	rep = fixOf(t, "demo6", "no-lost-update")
	require.True(t, rep.Safe())
}

// A neighbour that prevents the lost update only because the other
// clients never get the lock (wait=notify: an expiry publishes nothing)
// breaks progress, and is no fix.
func TestFixRejectsAFixThatBreaksAnotherProperty(t *testing.T) {
	rep := fixOf(t, "demo2", "no-lost-update")
	var notify *Candidate
	for i := range rep.Checked {
		if rep.Checked[i].ChangesText() == "wait poll → notify" {
			notify = &rep.Checked[i]
		}
	}
	require.NotNil(t, notify)
	require.Contains(t, notify.Breaks, "progress")
	require.False(t, notify.Holds)
	for _, f := range rep.Fixes {
		require.NotEqual(t, notify.Name(), f.Name())
	}
}

// The neighbours come from the grammar: every value of every path part and
// word parameter of model.DescribeAxes is reached by some single change of
// some design, and two changes never repeat a design of one change.
func TestNeighboursCoverTheGrammar(t *testing.T) {
	reached := map[string]bool{}
	for _, name := range []string{"redis/cad/none/plain", "redlock/cad/none/plain", "db/cad/none/plain", "redis/del/rw/max-token,renew=3", "redlock/cad/rw/max-token,counter=external", "redis/cad/none/plain,losses=1,timeout=3,release-fail=forget", "etcd/cad/none/plain,renew=3"} {
		d, err := model.ParseDesign(name)
		require.NoError(t, err)
		for _, c := range changes(d) {
			reached[c.Key+"="+c.From] = true
			reached[c.Key+"="+c.To] = true
		}
		one, _ := Neighbours(d, 1)
		two, _ := Neighbours(d, 2)
		names := map[string]bool{}
		for _, c := range one {
			require.Len(t, c.Changes, 1)
			names[c.Name()] = true
		}
		for _, c := range two {
			require.Len(t, c.Changes, 2)
			require.False(t, names[c.Name()], "%s is one change away", c.Name())
			require.NotEqual(t, c.Changes[0].Key, c.Changes[1].Key)
		}
	}
	axes := model.DescribeAxes()
	section := ""
	for _, line := range strings.Split(axes, "\n") {
		if strings.HasPrefix(line, "numbers") || strings.HasPrefix(line, "presets") {
			section = ""
			continue
		}
		if !strings.HasPrefix(line, " ") && strings.HasSuffix(line, "):") {
			section, _, _ = strings.Cut(line, " ")
			continue
		}
		// the fault budget's words (what a partition cuts, where a fault
		// falls) are kept by a fix, not changed
		budget := section == "partition" || section == "lose" || strings.HasSuffix(section, "-at")
		if section == "" || section == "bug" || section == "clock" || budget || !strings.HasPrefix(line, "  ") {
			continue
		}
		value := strings.Fields(line)[0]
		require.True(t, reached[section+"="+value], "no change reaches %s=%s", section, value)
	}
}

func TestFixIsDeterministic(t *testing.T) {
	a := fixOf(t, "demo4", "")
	b := fixOf(t, "demo4", "")
	require.Equal(t, len(a.Checked), len(b.Checked))
	for i := range a.Checked {
		require.Equal(t, a.Checked[i].Name(), b.Checked[i].Name())
		require.Equal(t, a.Checked[i].Results, b.Checked[i].Results)
	}
}

func TestFixBadInput(t *testing.T) {
	d := model.DefaultDesign()
	p, _ := model.PropertyByName("all-done")
	_, err := Fix(FixConfig{Design: d, Properties: []model.Property{p}})
	require.ErrorContains(t, err, "sometimes property")
	_, err = Fix(FixConfig{Design: d, MaxChanges: 3})
	require.ErrorContains(t, err, "want 1 or 2")
}

// A longer TTL whose faults would have to grow past the model's 60 ticks
// is not judged (against a pause that stayed short it would hold,
// vacuously), and says so.
func TestFixDoesNotJudgeALeaseItCannotGrowFaultsFor(t *testing.T) {
	d, err := model.ParseDesign("redis/cad/none/plain,ttl=20")
	require.NoError(t, err)
	require.Equal(t, 25, d.MaxPauseTicks)
	cands, _, ungrown := neighbours(d, 1, map[string]bool{d.Name(): true})
	// lock=consul lives 2 × ttl + lock-delay = 60 ticks: its pause would
	// have to grow by 40 as well
	require.Equal(t, []string{"lock redis → consul", "ttl 20 → 60"}, ungrown)
	for _, c := range cands {
		if c.Changes[0].Key == "ttl" {
			require.Equal(t, c.Design.TTLTicks-20, c.Design.MaxPauseTicks-25, "%s: the pause grew with the TTL", c.Name())
		}
	}
}
