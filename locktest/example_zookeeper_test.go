package locktest_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"lockcheck/locktest"
)

// zkLock is an adapter for go-zookeeper's lock recipe (github.com/go-
// zookeeper/zk v1.0.4, lock.go): zk.NewLock on the target's lock node,
// LockWithData with the target's value as the node's data, Unlock.
//
// What the recipe does (lock.go): LockWithData creates
// <path>/_c_<GUID>-lock-<seq> with Conn.CreateProtectedEphemeralSequential
// (conn.go: after a lost reply it finds the node again by its GUID), lists
// the children (parseSeq: every child's name must end in lock-<seq>),
// returns if its node is the lowest, else watches its predecessor (GetW)
// and blocks on the watch; a watch ended by the session's expiry returns
// its error, zk.ErrSessionExpired. Unlock deletes the node and, only if
// the delete succeeded, forgets it: after a failed Unlock (the node went
// with an expired session: zk.ErrNoNode) the Lock still thinks it holds
// its node, and its next LockWithData says zk.ErrDeadlock, so the adapter
// makes a new Lock then.
type zkLock struct {
	c   *zk.Conn
	t   locktest.Target
	l   *zk.Lock
	bug string // a planted mistake (TestPlantedZooKeeperClient); "" for none
}

func (l *zkLock) Acquire(context.Context) (bool, error) {
	err := l.l.LockWithData([]byte(l.t.Value)) // blocks until its node is the lowest
	if errors.Is(err, zk.ErrSessionExpired) {  // its node went with its session while it waited
		return false, nil
	}
	return err == nil, err
}

func (l *zkLock) Release(context.Context) (bool, error) {
	err := l.l.Unlock()
	if l.bug == "unlock-error-ignored" { // never looks at what Unlock said
		return true, nil
	}
	if err != nil { // its node is gone (zk.ErrNoNode, zk.ErrSessionExpired): a new Lock for the next job
		l.l = zk.NewLock(l.c, l.t.Key, zk.WorldACL(zk.PermAll))
		return false, nil
	}
	return true, nil
}

func (l *zkLock) Close() error { l.c.Close(); return nil }

// oneServer is a zk.HostProvider that reconnects at once: the default
// DNSHostProvider waits a second before it tries a one-server list again
// (dnshostprovider.go Next, conn.go connect), ten 100ms ticks after a
// paused client resumes, a timing no schedule models.
type oneServer struct{ addr string }

func (h *oneServer) Init(servers []string) error { h.addr = servers[0]; return nil }
func (h *oneServer) Len() int                    { return 1 }
func (h *oneServer) Next() (string, bool)        { return h.addr, false }
func (h *oneServer) Connected()                  {}

func newZkLock(bug string) func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
	return func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
		c, err := zkSession(t)
		if err != nil {
			return nil, err
		}
		return &zkLock{c: c, t: t, l: zk.NewLock(c, t.Key, zk.WorldACL(zk.PermAll)), bug: bug}, nil
	}
}

// zkSession is a session of the target's server, with its session
// timeout, established before the clock starts.
func zkSession(t locktest.Target) (*zk.Conn, error) {
	c, events, err := zk.Connect([]string{t.Addr}, t.TTL, zk.WithHostProvider(&oneServer{}), zk.WithLogInfo(false),
		zk.WithLogger(zkQuiet{}))
	if err != nil {
		return nil, err
	}
	for ev := range events {
		if ev.State == zk.StateHasSession {
			break
		}
	}
	go func() {
		for range events {
		}
	}()
	return c, nil
}

// ciCut is n random schedules, or ci of them with CI=true: a ZooKeeper
// schedule plays about 20 ticks of 100ms against a JVM per schedule at
// once, and CI's whole run must stay within its 10 minutes (the model's
// shortest runs, 7 of them, are played either way).
func ciCut(n, ci int) int {
	if os.Getenv("CI") == "true" {
		return ci
	}
	return n
}

type zkQuiet struct{}

func (zkQuiet) Printf(string, ...any) {}

// TestMyZooKeeperLock plays the model's ZooKeeper lock (an ephemeral
// sequential node per client, the lowest holds, a session that expires
// during a pause or after a crash) against two instances of
// go-zookeeper's recipe: locktest starts a ZooKeeper server per schedule
// played at once. Without fencing the model loses an update when a pause
// outlives the session, and so does the recipe: nothing parts from the
// model.
func TestMyZooKeeperLock(t *testing.T) {
	t.Parallel() // mostly sleep: alongside the Redis tests
	locktest.Run(t, locktest.Config{
		Service:   locktest.ZooKeeper,
		Clients:   2,
		Schedules: ciCut(4, 1),
		New:       newZkLock(""),
	})
}

// TestPlantedZooKeeperClient: a client that ignores Unlock's error (its
// node went with its expired session) says it released a lock it no
// longer had, and is caught first on the shortest schedule that shows it.
func TestPlantedZooKeeperClient(t *testing.T) {
	t.Parallel()
	r := &recorder{TB: t}
	locktest.Run(r, locktest.Config{Service: locktest.ZooKeeper, Clients: 2, Schedules: ciCut(2, 1), New: newZkLock("unlock-error-ignored")})
	if len(r.errs) == 0 {
		t.Fatal("planted unlock-error-ignored on ZooKeeper: no schedule parts from the model")
	}
	// the shortest schedule whose holder's session expires before its
	// release: A pauses past its session, B takes the lock and writes, A
	// writes and releases (step 19), its node long gone
	first, want := r.errs[0], "step 19 (t=12 A release): reply: model release → 0, real release → 1 (deleted)"
	if !strings.Contains(first, "schedule no-lost-update ") || !strings.Contains(first, want) || !strings.Contains(first, "replay: LOCKTEST_SEED=") {
		t.Fatalf("planted unlock-error-ignored: want the first report on schedule no-lost-update naming %q, with a replay line, got:\n%s", want, first)
	}
	t.Logf("%d schedules part from the model; the first:\n%s", len(r.errs), first)
}
