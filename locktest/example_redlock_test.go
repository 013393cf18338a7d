package locktest_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"lockcheck/locktest"
)

// redlockLock is an adapter for redsync's Redlock (github.com/go-redsync/
// redsync/v4 v4.18.1): one goredis pool per node (Target.Addrs), a Mutex on
// Target.Key whose value is Target.Value (WithGenValueFunc), TryLock to
// acquire (no retry loop: the schedule polls), Unlock to release.
//
// What redsync does (mutex.go): TryLockContext sends SET NX PX to every
// node at once (actOnPoolsAsync, a goroutine per pool), each bounded by
// expiry × timeoutFactor (0.05 by default: WithTimeoutFactor raises it, as
// a node's request may wait for the schedule's step for that node), counts
// the nodes that said OK, and keeps the lock if a majority did and
// now < until = now + expiry − elapsed − expiry × driftFactor; otherwise
// it deletes what it won on every node and says ErrFailed (or ErrTaken).
// UnlockContext runs its check-and-delete script on every node and says
// true if a majority deleted its key: what locktest.Redlock's Release
// reports.
type redlockLock struct {
	rcs   []*redis.Client
	m     *redsync.Mutex
	nodes int
	bug   string // a planted mistake (TestPlantedRedlockClients); "" for none
	t     locktest.Target
}

func (l *redlockLock) Acquire(ctx context.Context) (bool, error) {
	if l.bug == "minority-wins" {
		return l.minorityAcquire(ctx)
	}
	err := l.m.TryLockContext(ctx)
	var taken *redsync.ErrTaken
	var nodeTaken *redsync.ErrNodeTaken
	// lost: the vote (ErrFailed, ErrTaken), or a majority with no validity
	// left, where TryLock returns the nodes' joined verdicts (an
	// ErrNodeTaken for each node another held): poll again
	if errors.Is(err, redsync.ErrFailed) || errors.As(err, &taken) || errors.As(err, &nodeTaken) {
		return false, nil
	}
	return err == nil, err
}

func (l *redlockLock) Release(ctx context.Context) (bool, error) {
	if l.bug == "minority-wins" {
		return l.minorityRelease(ctx)
	}
	ok, err := l.m.UnlockContext(ctx)
	if l.bug == "unlock-result-ignored" { // never looks at what Unlock said
		return true, nil
	}
	// false: its key was gone or another's on too many nodes (err says
	// which: ErrTaken, ErrLockAlreadyExpired, a RedisError per node)
	_ = err
	return ok, nil
}

// minorityAcquire is a Redlock client of its own (not redsync) with an
// off-by-one quorum: SET NX PX on each node in turn, won with half the
// nodes (two of five); its release is minorityRelease.
func (l *redlockLock) minorityAcquire(ctx context.Context) (bool, error) {
	won := 0
	for _, rc := range l.rcs {
		ok, err := rc.SetNX(ctx, l.t.Key, l.t.Value, l.t.TTL).Result()
		if err != nil {
			return false, err
		}
		if ok {
			won++
		}
	}
	if won >= l.nodes/2 {
		return true, nil
	}
	for _, rc := range l.rcs { // lost: delete what it won
		if err := rc.Eval(ctx, `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`, []string{l.t.Key}, l.t.Value).Err(); err != nil {
			return false, err
		}
	}
	return false, nil
}

// minorityRelease is minorityAcquire's release: check-and-delete on
// every node, released if a majority deleted.
func (l *redlockLock) minorityRelease(ctx context.Context) (bool, error) {
	n := 0
	for _, rc := range l.rcs {
		d, err := rc.Eval(ctx, `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`, []string{l.t.Key}, l.t.Value).Int()
		if err != nil {
			return false, err
		}
		n += d
	}
	return n > l.nodes/2, nil
}

func (l *redlockLock) Close() error {
	for _, rc := range l.rcs {
		rc.Close()
	}
	return nil
}

// newRedlock makes a redsync Redlock client on the target's nodes.
func newRedlock(bug string) func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
	return func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
		l := &redlockLock{nodes: len(t.Addrs), bug: bug, t: t}
		var pools []rsredis.Pool
		for _, a := range t.Addrs {
			// one connection per node, no read deadline: a node's request
			// may wait for its step
			rc := redis.NewClient(&redis.Options{Addr: a, DB: t.DB, MaxRetries: -1, PoolSize: 1, ReadTimeout: -1})
			l.rcs = append(l.rcs, rc)
			if err := rc.Ping(ctx).Err(); err != nil { // connected before the schedule's clock starts
				l.Close()
				return nil, err
			}
			pools = append(pools, goredis.NewPool(rc))
		}
		l.m = redsync.New(pools...).NewMutex(t.Key,
			redsync.WithExpiry(t.TTL),
			redsync.WithDriftFactor(float64(t.Drift)/float64(t.TTL)),
			redsync.WithTimeoutFactor(100),
			redsync.WithTries(1),
			redsync.WithGenValueFunc(func() (string, error) { return t.Value, nil }))
		return l, nil
	}
}

// TestMyRedlock plays the model's Redlock (five Redis nodes, a majority
// won within the validity) against two instances of redsync's: locktest
// starts the nodes and plays each attempt's SETs node by node as the model
// orders them. Without fencing the model loses an update when a pause
// outlives the TTL, and so does redsync: nothing parts from the model.
func TestMyRedlock(t *testing.T) {
	locktest.Run(t, locktest.Config{
		Service:   locktest.Redlock,
		Schedules: 4,
		New:       newRedlock(""),
	})
}

// TestPlantedRedlockClients: a client that ignores Unlock's answer says it
// released a lock whose keys had expired, and a client whose quorum is a
// minority counts a vote it did not win; each is caught first on the
// shortest schedule that shows it.
func TestPlantedRedlockClients(t *testing.T) {
	for _, tc := range []struct{ bug, first, want string }{
		{"unlock-result-ignored", "schedule no-lost-update ", "reply: model release → 0, real release → 1 (deleted)"},
		{"minority-wins", "schedule lost-by-one ", "node asked, won: model 5 false, real 5 true"},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			r := &recorder{TB: t}
			locktest.Run(r, locktest.Config{Service: locktest.Redlock, Schedules: 2, New: newRedlock(tc.bug)})
			if len(r.errs) == 0 {
				t.Fatalf("planted %s on Redlock: no schedule parts from the model", tc.bug)
			}
			first := r.errs[0]
			if !strings.Contains(first, tc.first) || !strings.Contains(first, tc.want) || !strings.Contains(first, "replay: LOCKTEST_SEED=") {
				t.Fatalf("planted %s: want the first report on %q naming %q with a replay line, got:\n%s", tc.bug, tc.first, tc.want, first)
			}
			t.Logf("planted %s: %d schedules part from the model; the first:\n%s", tc.bug, len(r.errs), first)
		})
	}
}

// backwards is a Redlock client that asks the nodes last first: against
// the per-node order (a request to node k goes through at the attempt's
// step for node k), its Acquire waits on node 5 while the first step
// waits for node 1.
type backwards struct{ redlockLock }

func (l *backwards) Acquire(ctx context.Context) (bool, error) {
	won := 0
	for k := len(l.rcs) - 1; k >= 0; k-- {
		ok, err := l.rcs[k].SetNX(ctx, l.t.Key, l.t.Value, l.t.TTL).Result()
		if err != nil {
			return false, err
		}
		if ok {
			won++
		}
	}
	return won > l.nodes/2, nil
}

// TestRedlockBadAcquire: an Acquire that asks the nodes in another order
// gets one error naming the node the step waited for, and the run leaves
// no redis-server and no server folder behind (counted before and after).
func TestRedlockBadAcquire(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to count processes in")
	}
	p0, d0 := leftovers(t)
	t.Run("backwards", func(t *testing.T) {
		r := &recorder{TB: t}
		locktest.Run(r, locktest.Config{Service: locktest.Redlock, Schedules: 1, Parallel: 1, New: func(ctx context.Context, tg locktest.Target) (locktest.Lock, error) {
			l, err := newRedlock("")(ctx, tg)
			if err != nil {
				return nil, err
			}
			return &backwards{*l.(*redlockLock)}, nil
		}})
		want := "A acquire at t=1): your lock's Acquire neither asked node 1 (Target.Addrs[0]) nor returned within 5s"
		if len(r.errs) != 1 || !strings.Contains(r.errs[0], want) {
			t.Fatalf("want one error naming %q, got %q", want, r.errs)
		}
	})
	if p, d := leftovers(t); p != p0 || d != d0 {
		t.Errorf("%d child processes and %d server folders before, %d and %d after", p0, d0, p, d)
	}
}
