package model

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// zkReplay replays steps (scenario lines) on design name.
func zkReplay(t *testing.T, name string, steps ...string) *Run {
	t.Helper()
	sc, err := ParseScenario("design " + name + "\n" + strings.Join(steps, "\n") + "\n")
	require.NoError(t, err)
	r, err := Replay(&sc.Design, sc.Trace)
	require.NoError(t, err)
	return r
}

// A create whose reply is lost: with protected mode the retry finds the
// node and A holds the lock; without it, A creates a second node, its
// first (the lowest) stays with its session, and the lock is held for
// ever by no client that believes in it: progress is violated at the lost
// reply, and HeldForEver names A.
func TestUnprotectedCreateLeavesAnOrphan(t *testing.T) {
	const base = "zookeeper/cad/none/plain,lose-at=acquire,clients=2,pauses=0,losses=1,timeout=3"
	steps := []string{"A lose", "B acquire", "tick 3", "A acquire"}

	r := zkReplay(t, base, steps...)
	_, v := r.Violated("progress")
	require.False(t, v)
	require.True(t, r.Final.Clients[A].Believes(), "protected mode: the retry finds the lowest node, A's")
	require.Equal(t, -1, HeldForEver(&r.Design, &r.Final))

	r = zkReplay(t, base+",protect=no", steps...)
	seq, v := r.Violated("progress")
	require.True(t, v)
	require.Equal(t, 1, seq, "held for ever from the lost reply on")
	f := &r.Final
	require.False(t, f.Clients[A].Believes())
	require.Equal(t, uint16(3), f.Clients[A].Token, "A's second node")
	require.Equal(t, Node{Owner: A + 1, Fence: 1}, f.Nodes[1], "the orphan: A's session's, sequence 1")
	require.Equal(t, uint8(A+1), f.Nodes[0].Owner, "the lowest node is A's")
	require.Equal(t, A, HeldForEver(&r.Design, f))
	require.Contains(t, HeldForEverWords(&r.Design, f), "/lock/n-0000000001, is A's")
	require.False(t, Enabled(&r.Design, f, Action{Kind: ActAcquire, Client: A}), "A waits behind its own node")
	require.False(t, Enabled(&r.Design, f, Action{Kind: ActAcquire, Client: B}))
}

// The orphan goes with its session: a crash (the session expires after
// session ticks) or a pause that outlives the session frees the lock,
// and the next client in line takes it.
func TestOrphanEndsWithItsSession(t *testing.T) {
	const base = "zookeeper/cad/none/plain,protect=no,lose-at=acquire,clients=2,losses=1,timeout=3,session=5"
	for _, end := range []string{"A crash", "A pause 8"} {
		budget := ",pauses=0,crashes=1"
		if end != "A crash" {
			budget = ",max-pause=8"
		}
		r := zkReplay(t, base+budget, "A lose", "B acquire", end, "tick 5")
		f := &r.Final
		require.Equal(t, Node{}, f.Nodes[1], "%s: the orphan is gone with A's session", end)
		require.Equal(t, uint8(B+1), f.Nodes[0].Owner, end)
		require.Equal(t, -1, HeldForEver(&r.Design, f), end)
		d := r.Design
		require.True(t, Enabled(&d, f, Action{Kind: ActAcquire, Client: B}), "%s: B's watch fires", end)
	}
}

// Two orphans, of two clients, stay in sequence order whichever session
// ends first (the symmetry of states relies on it).
func TestOrphansStayInOrder(t *testing.T) {
	r := zkReplay(t, "zookeeper/cad/none/plain,protect=no,lose-at=acquire,clients=3,pauses=0,crashes=1,losses=2,timeout=3,session=5",
		"A lose", "B lose", "C acquire", "A crash", "tick 3", "B acquire", "tick 2")
	f := &r.Final
	require.Equal(t, Node{Owner: B + 1, Fence: 2}, f.Nodes[1], "B's orphan moves to the first slot")
	require.Equal(t, Node{}, f.Nodes[2])
	require.Equal(t, B, HeldForEver(&r.Design, f))
}

// pool=tx: C re-enters backend 1's lock and its unlock lands on the other
// backend, so backend 1 keeps the lock with nobody believing in it while
// B is live: progress is violated there (it held before HeldForEver).
func TestPooledBackendHoldsForEver(t *testing.T) {
	r := zkReplay(t, "advisory/cad/none/plain,pool=tx,pauses=0",
		"A acquire", "A read", "B acquire", "C acquire", "C read", "tick", "B acquire", "tick", "A write", "A release", "C write", "C release")
	seq, v := r.Violated("progress")
	require.True(t, v)
	require.Equal(t, 12, seq, "at C's unlock, which landed on backend 2: B waits")
	require.Equal(t, 1, HeldForEver(&r.Design, &r.Final))
	require.Contains(t, HeldForEverWords(&r.Design, &r.Final), "backend 1 holds the advisory lock")
}

// A session stops hearing from its client when a pause or a partition
// begins, so a crash later in it does not restart the session's
// countdown: cut off at t=1 for longer than the session, A's node still
// expires at t=11 when A crashes at t=6 (not at t=16), and B's create
// then holds the lock. A crash of a paused client is not drawn: it is the
// crash at the pause's start, with nothing done in between.
func TestCrashKeepsTheSessionsCountdown(t *testing.T) {
	const base = "zookeeper/cad/none/plain,clients=2,slow=1,crashes=1"
	cut := []string{"A acquire", "B acquire", "A slow", "A read", "A partition 1", "tick 5", "A crash"}
	r := zkReplay(t, base+",pauses=0,partitions=1,partition-ticks=15", cut...)
	require.Equal(t, uint8(11), r.Final.Clients[A].Timer, "A's session expires a session after the partition began")
	r = zkReplay(t, base+",pauses=0,partitions=1,partition-ticks=15", append(cut, "tick 5", "B acquire")...)
	require.True(t, r.Final.Clients[B].Believes(), "B holds the lock once A's session expired at t=11")

	r = zkReplay(t, base+",max-pause=12", "A acquire", "B acquire", "A pause 12", "tick 3")
	require.False(t, Enabled(&r.Design, &r.Final, Action{Kind: ActCrash, Client: A}), "a paused client's crash is its pause's start's")
	r = zkReplay(t, base+",max-pause=12", "A acquire", "A crash")
	require.Equal(t, uint8(11), r.Final.Clients[A].Timer)
}
