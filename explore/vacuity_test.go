package explore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/model"
)

func checkName(t *testing.T, name string, props ...model.Property) *Report {
	t.Helper()
	d, err := model.ParseDesign(name)
	require.NoError(t, err)
	rep, err := Check(Config{Design: d, Properties: props, Bounds: Bounds{Symmetry: true}})
	require.NoError(t, err)
	return rep
}

// A design whose budget never takes a lock from its holder holds every
// safety property vacuously, and says so; one whose budget does is not
// vacuous, even where the property holds.
func TestVacuousVerdicts(t *testing.T) {
	rep := checkName(t, "demo1")
	require.False(t, rep.Coverage.LockLost)
	require.Empty(t, rep.Coverage.Faults())
	for _, r := range rep.Results {
		if r.Expect == model.Always {
			require.Equal(t, Holds, r.Status, r.Property)
			require.Contains(t, r.Vacuous, "no lock expired or was lost while held", r.Property)
		} else {
			require.Empty(t, r.Vacuous)
		}
	}

	rep = checkName(t, "demo6") // fenced: lock-unsafe, data-safe, and tested
	require.True(t, rep.Coverage.LockLost)
	require.Equal(t, []model.ActionKind{model.ActPause}, rep.Coverage.Faults())
	res, _ := rep.Result("no-lost-update")
	require.Equal(t, Holds, res.Status)
	require.Empty(t, res.Vacuous)

	// progress is put to the test by a crash too
	rep = checkName(t, "redis/cad/none/plain,pauses=0,crashes=1")
	res, _ = rep.Result("progress")
	require.Empty(t, res.Vacuous)
	res, _ = rep.Result("exclusive")
	require.NotEmpty(t, res.Vacuous)

	// a lock lost by a node fault, not an expiry, is a witness as well
	nlu, ok := model.PropertyByName("no-lost-update")
	require.True(t, ok)
	rep = checkName(t, "replica/cad/rw/cond-update,pauses=0", nlu)
	require.Equal(t, Holds, rep.Results[0].Status)
	require.True(t, rep.Coverage.LockLost)
	require.Empty(t, rep.Results[0].Vacuous)
}

// Planted: a budget that cannot fire (the pause one tick short of what an
// expiry needs) turns the same verdict vacuous; one tick more and it is not.
func TestVacuityFlipsWithTheBudget(t *testing.T) {
	props, err := model.ParseProperties("no-lost-update")
	require.NoError(t, err)
	short := checkName(t, "redis/cad/rw/max-token,max-pause=7", props...)
	require.Equal(t, Holds, short.Results[0].Status)
	require.NotEmpty(t, short.Results[0].Vacuous)
	enough := checkName(t, "redis/cad/rw/max-token,max-pause=8", props...)
	require.Equal(t, Holds, enough.Results[0].Status)
	require.Empty(t, enough.Results[0].Vacuous)
	// and without fencing the pause that makes it non-vacuous breaks it
	broken := checkName(t, "redis/cad/none/plain,max-pause=7", props...)
	require.Equal(t, Holds, broken.Results[0].Status)
	require.NotEmpty(t, broken.Results[0].Vacuous)
}

// The hint is found by search and is the least: at N a lock is lost while
// held, at N-1 it is not.
func TestHintIsTheLeastPause(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"redis/cad/rw/max-token,max-pause=7", "raise max-pause to at least 8"},
		{"demo1", "add a pause: pauses=1 and max-pause at least 8"},
		{"redis/cad/none/plain,ttl=30,max-pause=15,horizon=40", "raise max-pause to at least 28"},
	} {
		d, err := model.ParseDesign(tc.name)
		require.NoError(t, err)
		hint, err := Hint(d, Bounds{Symmetry: true})
		require.NoError(t, err)
		require.Equal(t, tc.want, hint, tc.name)
	}
	lost := func(maxPause int) bool {
		d, err := model.ParseDesign("redis/cad/none/plain,ttl=30,horizon=40")
		require.NoError(t, err)
		d.MaxPauseTicks = maxPause
		rep, err := Check(Config{Design: d, Properties: []model.Property{model.LockLostProperty}, Bounds: Bounds{Symmetry: true}})
		require.NoError(t, err)
		return rep.Results[0].Status == Seen
	}
	require.True(t, lost(28))
	require.False(t, lost(27))
}

// A retried release that reaches another's lock puts own-release to the
// test without any lock being lost while held; and a client whose release
// reply was lost has left its critical section, so mutex is not broken by
// its resend.
func TestForeignReleaseWitness(t *testing.T) {
	rep := checkName(t, "redis/cad/none/plain,lose-at=release,pauses=0,losses=1,timeout=3")
	require.False(t, rep.Coverage.LockLost)
	require.True(t, rep.Coverage.ForeignRelease)
	res, _ := rep.Result("own-release")
	require.Equal(t, Holds, res.Status)
	require.Empty(t, res.Vacuous)
	res, _ = rep.Result("mutex")
	require.Equal(t, Holds, res.Status)
	require.NotEmpty(t, res.Vacuous)
	// with a plain DEL the same resend removes the next holder's key
	rep = checkName(t, "redis/del/none/plain,lose-at=release,pauses=0,losses=1,timeout=3")
	res, _ = rep.Result("own-release")
	require.Equal(t, Violated, res.Status)
}

// A partition question is tested by a slow job, not a pause: the hint of
// a design whose budget has a partition and no slow job names a slow job
// (before, it always said "add a pause"), and the least slow-work found
// loses a lock while one tick less does not.
func TestHintNamesTheFaultThatFits(t *testing.T) {
	d, err := model.ParseDesign("etcd/cad/none/plain,renew=3,pauses=0,partitions=1")
	require.NoError(t, err)
	hint, err := Hint(d, Bounds{Symmetry: true})
	require.NoError(t, err)
	require.Equal(t, "add a slow job: slow=1 and slow-work at least 10 (a partition matters only while its holder is still working)", hint)
	lost := func(work int) bool {
		rep, err := Check(Config{Design: model.WithSlow(d, 1, work), Properties: []model.Property{model.LockLostProperty}, Bounds: Bounds{Symmetry: true}})
		require.NoError(t, err)
		return rep.Results[0].Status == Seen
	}
	require.True(t, lost(10))
	require.False(t, lost(9))
}

// A fault that reached the property is a witness, though no lock was lost
// while held: a late copy of a write that the fence refused puts
// no-lost-update to the test (before: "holds, vacuously"), while mutex,
// which no such copy can break, stays vacuous.
func TestRejectedLateCopyIsAWitness(t *testing.T) {
	rep := checkName(t, "redis/cad/rw/max-token,delay-at=write,pauses=0,delays=1,timeout=3")
	require.False(t, rep.Coverage.LockLost)
	require.True(t, rep.Coverage.Rejected)
	res, _ := rep.Result("no-lost-update")
	require.Equal(t, Holds, res.Status)
	require.Empty(t, res.Vacuous)
	res, _ = rep.Result("mutex")
	require.Equal(t, Holds, res.Status)
	require.NotEmpty(t, res.Vacuous)
}

// acquire=set-expire and a lost SET NX reply: the key has no expiry, the
// client's resent SET NX is refused by its own key for ever, and the
// others wait on it: progress is violated on a one-job design (before,
// StuckNode counted a live owner's forgotten key only with jobs ≥ 2 or
// restarts, and progress "held, vacuously"). With the key's expiry set
// by SET NX PX, the same lost reply is harmless.
func TestLostSetNXReplyLeavesTheLockStuck(t *testing.T) {
	rep := checkName(t, "redis/cad/none/plain,acquire=set-expire,clients=2,pauses=0,losses=1,lose-at=acquire,timeout=3")
	res, _ := rep.Result("progress")
	require.Equal(t, Violated, res.Status)
	run, err := model.Replay(&rep.Design, res.Trace)
	require.NoError(t, err)
	require.Contains(t, model.Render(run), "NX → OK; the reply is lost")
	rep = checkName(t, "redis/cad/none/plain,clients=2,pauses=0,losses=1,lose-at=acquire,timeout=3")
	res, _ = rep.Result("progress")
	require.Equal(t, Holds, res.Status)
	// and the key a lost reply left without expiry is a witness of progress
	rep = checkName(t, "redis/cad/none/plain,acquire=set-expire,reenter=owner,clients=2,pauses=0,losses=1,lose-at=acquire,timeout=3")
	require.True(t, rep.Coverage.NoExpiry)
	res, _ = rep.Result("progress")
	require.Empty(t, res.Vacuous)
}

// The hint searches over fault kinds, not only the pause: a design that
// already has a partition or a network delay is asked first for a longer
// one of its own, and the length named is the least (at N the lock is
// lost while held, at N-1 it is not).
func TestHintSearchesFaultKinds(t *testing.T) {
	for _, tc := range []struct {
		name, want, param string
		least             int
	}{
		{"redis/cad/none/plain,renew=3,pauses=0,slow=1,partitions=1,partition-ticks=3,clients=2", "raise partition-ticks to at least 7", "partition-ticks", 7},
		{"redis/cad/none/plain,pauses=0,slow=1,slow-work=5,delays=1,max-delay=3", "raise max-delay to at least 5", "max-delay", 5},
		// network faults without a slow job: the holder must still be working
		{"etcd/cad/none/plain,pauses=0,partitions=1", "add a slow job: slow=1 and slow-work at least 10", "", 0},
	} {
		d, err := model.ParseDesign(tc.name)
		require.NoError(t, err)
		hint, err := Hint(d, Bounds{Symmetry: true})
		require.NoError(t, err)
		require.Contains(t, hint, tc.want, tc.name)
		if tc.param == "" {
			continue
		}
		lost := func(m int) bool {
			dd, err := model.Override(d, model.Setting{Name: tc.param, Value: m})
			require.NoError(t, err)
			rep, err := Check(Config{Design: dd, Properties: []model.Property{model.LockLostProperty}, Bounds: Bounds{Symmetry: true}})
			require.NoError(t, err)
			return rep.Results[0].Status == Seen
		}
		require.True(t, lost(tc.least), tc.name)
		require.False(t, lost(tc.least-1), tc.name)
	}
}

// A watchdog that renews a slow job's lock before it would expire has been
// put to the test: exclusive, mutex and no-lost-update hold and are not
// vacuous. A slow job that ends before its first TTL needs no renewal, so
// there the same verdicts stay vacuous.
func TestRenewalThatSavesIsAWitness(t *testing.T) {
	saved := checkName(t, "redis/cad/none/plain,pauses=0,slow=1,renew=3,clients=2")
	require.False(t, saved.Coverage.LockLost)
	require.True(t, saved.Coverage.RenewSaved)
	for _, p := range []string{"exclusive", "mutex", "no-lost-update"} {
		res, _ := saved.Result(p)
		require.Equal(t, Holds, res.Status, p)
		require.Empty(t, res.Vacuous, p)
	}
	res, _ := saved.Result("own-release") // no release reached another's lock
	require.NotEmpty(t, res.Vacuous)

	notNeeded := checkName(t, "redis/cad/none/plain,pauses=0,slow=1,slow-work=5,renew=3,clients=2")
	require.False(t, notNeeded.Coverage.RenewSaved)
	res, _ = notNeeded.Result("exclusive")
	require.Equal(t, Holds, res.Status)
	require.NotEmpty(t, res.Vacuous)

	// a renewer outside the worker's process outlives the worker's pause
	sidecar := checkName(t, "redis/cad/none/plain,renew=3,clients=2,watchdog=sidecar")
	require.True(t, sidecar.Coverage.RenewSaved)

	// Redlock's watchdog is put to the test when, without its extension,
	// fewer than a quorum of its keys would outlive the worker's next
	// step (before: never, so a slow job's exclusive was called vacuous)
	quorum := checkName(t, "redlock/cad/none/plain,pauses=0,slow=1,renew=3,clients=2")
	require.True(t, quorum.Coverage.RenewSaved)
	for _, p := range []string{"exclusive", "mutex", "no-lost-update"} {
		res, _ := quorum.Result(p)
		require.Equal(t, Holds, res.Status, p)
		require.Empty(t, res.Vacuous, p)
	}
	quorumNotNeeded := checkName(t, "redlock/cad/none/plain,pauses=0,slow=1,slow-work=5,renew=3,clients=2")
	require.False(t, quorumNotNeeded.Coverage.RenewSaved)
	res, _ = quorumNotNeeded.Result("exclusive")
	require.NotEmpty(t, res.Vacuous)
}
