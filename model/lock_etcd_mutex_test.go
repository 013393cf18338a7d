package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// rwViolated lists the always-properties run r violates.
func rwViolated(r *Run) []string {
	var out []string
	for _, p := range Properties {
		if _, v := r.Violated(p.Name); v && p.Expect == Always {
			out = append(out, p.Name)
		}
	}
	return out
}

// Two readers hold the read lock together and mutex stays quiet; the
// writer behind them waits until both keys are deleted, and a reader's job
// reads and releases without a write.
func TestReadersShareTheLock(t *testing.T) {
	r := zkReplay(t, "etcd-mutex/del/none/plain,readers=2,pauses=0",
		"A acquire", "B acquire", "C acquire")
	f := &r.Final
	d := &r.Design
	require.True(t, f.Clients[A].Believes())
	require.True(t, f.Clients[B].Believes(), "B's read key has only A's read key below it")
	require.True(t, HoldsLock(d, f, A))
	require.True(t, HoldsLock(d, f, B))
	require.False(t, HoldsLock(d, f, C))
	require.Equal(t, uint8(A+1), f.Nodes[0].Owner, "the queue's head stays the first key")
	require.False(t, Enabled(d, f, Action{Kind: ActAcquire, Client: C}), "the writer waits for every key below its own")
	require.Empty(t, rwViolated(r))

	r = zkReplay(t, "etcd-mutex/del/none/plain,readers=2,pauses=0",
		"A acquire", "B acquire", "C acquire", "A read", "A release", "B read", "B release",
		"C acquire", "C read", "tick 2", "C write", "C release")
	require.Empty(t, rwViolated(r))
	require.Equal(t, uint8(1), r.Final.Store.Counter)
	require.Equal(t, uint8(1), r.Final.Store.Accepted, "the readers wrote nothing")
	for _, st := range r.Steps {
		if st.Action.Kind == ActRead && st.Action.Client != C {
			require.Equal(t, PhaseRelease, st.After.Clients[st.Action.Client].Phase, "a reader releases after its read")
		}
	}
}

// A writer holds alone: a reader whose key came later waits for the
// writer's delete (waitOnLastRev(pfx+"write")), and holds once it is gone.
func TestWriterExcludesReaders(t *testing.T) {
	r := zkReplay(t, "etcd-mutex/del/none/plain,readers=1,clients=2,pauses=0", "B acquire", "A acquire")
	d, f := &r.Design, &r.Final
	require.False(t, f.Clients[A].Believes())
	require.False(t, HoldsLock(d, f, A))
	require.False(t, Enabled(d, f, Action{Kind: ActAcquire, Client: A}))
	r = zkReplay(t, "etcd-mutex/del/none/plain,readers=1,clients=2,pauses=0",
		"B acquire", "A acquire", "B read", "tick 2", "B write", "B release", "A acquire")
	require.Empty(t, rwViolated(r))
	require.True(t, r.Final.Clients[A].Believes(), "the writer's key is deleted: the reader holds")
}

// mutex fires for a writer and a reader together, and exclusive for the
// reader's read while the writer holds: the reader's session expired in a
// pause while it held its read lock.
func TestReaderAfterItsSessionExpired(t *testing.T) {
	r := zkReplay(t, "etcd-mutex/del/none/plain,readers=1,clients=2",
		"A acquire", "A pause 11", "B acquire", "tick 10", "B acquire", "B read", "tick", "A read")
	require.Equal(t, []string{"exclusive", "mutex"}, rwViolated(r))
	seq, _ := r.Violated("mutex")
	require.Equal(t, 14, seq, "from the writer's grant")
	seq, _ = r.Violated("exclusive")
	require.Equal(t, 17, seq, "the reader's read")
}

// Without the Get (session-check=none, the recipe as it is; etcd issue
// 16221) a reader whose session expired while it waited behind a writer
// reads while a later writer holds the lock; with the Get it learns of
// its expired session and locks again.
func TestReaderWithoutTheGet(t *testing.T) {
	steps := []string{"B acquire", "A acquire", "C acquire", "A pause 11", "B read", "tick 2", "B write", "B release",
		"tick 8", "C acquire", "C read", "tick", "A acquire"}
	r := zkReplay(t, "etcd-mutex/del/none/plain,readers=1,session-check=none", append(steps, "A read")...)
	require.Equal(t, []string{"exclusive", "mutex"}, rwViolated(r))
	require.True(t, HoldsLock(&r.Design, &r.Final, C))
	require.False(t, HoldsLock(&r.Design, &r.Final, A), "A has no key")

	r = zkReplay(t, "etcd-mutex/del/none/plain,readers=1", steps...)
	require.Empty(t, rwViolated(r))
	require.False(t, r.Final.Clients[A].Believes(), "ErrSessionExpired: a new session, RLock again")
	require.False(t, Enabled(&r.Design, &r.Final, Action{Kind: ActRead, Client: A}))
}

// A reader's role outlives it: a crashed reader's key stays a read key
// until its session expires, so a later reader does not wait on it and a
// writer does; a finished reader stays a reader.
func TestReaderMarkOutlivesTheJob(t *testing.T) {
	r := zkReplay(t, "etcd-mutex/del/none/plain,readers=2,pauses=0,crashes=1", "A acquire", "A crash", "B acquire", "C acquire")
	d, f := &r.Design, &r.Final
	require.NotZero(t, f.Clients[A].Marks&MarkReader)
	require.True(t, f.Clients[B].Believes(), "B reads beside A's crashed read key")
	require.False(t, HoldsLock(d, f, C))

	r = zkReplay(t, "etcd-mutex/del/none/plain,readers=1,pauses=0", "A acquire", "A read", "A release")
	require.Equal(t, PhaseDone, r.Final.Clients[A].Phase)
	require.NotZero(t, r.Final.Clients[A].Marks&MarkReader)
}

// readers=0 is today's etcd-mutex: no client is marked, and the name does
// not change; readers=K marks A … K and only them, and their names are
// not interchangeable.
func TestReadersMarkTheFirstClients(t *testing.T) {
	d, err := ParseDesign("etcd-mutex/del/none/plain,readers=0")
	require.NoError(t, err)
	require.Equal(t, "etcd-mutex/del/none/plain", d.Name())
	s := Init(&d)
	for i := 0; i < d.Clients; i++ {
		require.Zero(t, s.Clients[i].Marks)
	}
	require.True(t, NamesInterchangeable(&d))
	d, err = ParseDesign("etcd-mutex/del/none/plain,readers=2,clients=4")
	require.NoError(t, err)
	s = Init(&d)
	for i, want := range []uint8{MarkReader, MarkReader, 0, 0} {
		require.Equal(t, want, s.Clients[i].Marks, ClientName(i))
	}
	require.False(t, NamesInterchangeable(&d))
	require.Contains(t, PropertiesFor(&d)[1].DocFor(&d), "readers share it")
}
