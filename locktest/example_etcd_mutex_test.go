package locktest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"lockcheck/locktest"
)

// etcdMutex is an adapter for etcd's queued Mutex (go.etcd.io/etcd/
// client/v3 v3.6.16, package concurrency): a Session of the target's TTL
// and concurrency.NewMutex on the target's prefix.
//
// What the library does (concurrency/session.go, mutex.go, key.go):
// NewSession with WithTTL grants a lease of that many seconds and keeps it
// alive from a goroutine of its own (every TTL/3); Done closes when the
// lease is no longer kept alive. Mutex.Lock puts <prefix>/<lease> with
// the lease in tryAcquire's transaction (if absent) and returns if its
// key is the first by create revision; otherwise waitDeletes waits, a
// watch at a time, for the delete of every key created before its own,
// and Lock then Gets its own key: none means the lease ran out while it
// waited, ErrSessionExpired, and the session is no use any more (its
// lease is gone: a Lock on it fails with "requested lease not found"), so
// the adapter makes a new Session and reports false. Unlock deletes its
// key by name and answers nil whether the key was there or not (etcd's
// delete of a missing key is no error): the adapter Gets its key first
// and reports whether it was still there. The key's value is empty, so
// the adapter tells the observer its key's name (Owns).
type etcdMutex struct {
	cli *clientv3.Client
	t   locktest.Target
	s   *concurrency.Session
	m   *concurrency.Mutex
	key atomic.Pointer[string] // its session's key, <prefix>/<lease>: read by Owns
	bug string                 // a planted mistake (TestPlantedEtcdMutexClient); "" for none
}

// session makes a new Session and its Mutex.
func (l *etcdMutex) session(ctx context.Context) error {
	s, err := concurrency.NewSession(l.cli, concurrency.WithTTL(int(l.t.TTL/time.Second)), concurrency.WithContext(ctx))
	if err != nil {
		return err
	}
	l.s, l.m = s, concurrency.NewMutex(s, l.t.Key)
	key := fmt.Sprintf("%s/%x", l.t.Key, s.Lease())
	l.key.Store(&key)
	return nil
}

func (l *etcdMutex) Acquire(ctx context.Context) (bool, error) {
	err := l.m.Lock(ctx) // blocks until its key is the first
	if errors.Is(err, concurrency.ErrSessionExpired) {
		if l.bug == "stale-session" { // Locks again on the session whose lease ran out
			return false, nil
		}
		l.s.Orphan()                 // its lease is gone: stop the keep-alives
		return false, l.session(ctx) // a new session for the next Lock
	}
	if err != nil && l.bug == "stale-session" { // and takes the dead lease's error for "not yet"
		return false, nil
	}
	return err == nil, err
}

func (l *etcdMutex) Release(ctx context.Context) (bool, error) {
	if l.bug == "unlock-nil" { // takes Unlock's nil for "released"
		return l.m.Unlock(ctx) == nil, nil
	}
	r, err := l.cli.Get(ctx, l.m.Key()) // Unlock says nothing of whether its key was there
	if err != nil {
		return false, err
	}
	if err := l.m.Unlock(ctx); err != nil && !errors.Is(err, concurrency.ErrLockReleased) {
		return false, err
	}
	return len(r.Kvs) == 1, nil
}

// Owns: etcd's Mutex puts an empty value, so the observer asks whose key
// it sees by its name.
func (l *etcdMutex) Owns(key string) bool { k := l.key.Load(); return k != nil && *k == key }

func (l *etcdMutex) Close() error {
	l.s.Orphan() // a crashed client's lease is left to run out, as a dead process's
	return l.cli.Close()
}

func newEtcdMutex(bug string) func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
	return func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{t.Addr}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			return nil, err
		}
		l := &etcdMutex{cli: cli, t: t, bug: bug}
		// its session made before the schedule's clock starts: the
		// clock fits the first session's keep-alives
		if err := l.session(ctx); err != nil {
			cli.Close()
			return nil, err
		}
		return l, nil
	}
}

// TestMyEtcdMutex plays the model's queued Mutex (a key per session under
// a prefix, the first by create revision holds, a session whose lease
// runs out in a pause or after a crash) against two instances of etcd's
// concurrency.Mutex: locktest starts an embedded etcd member per schedule
// played at once. Without fencing the model loses an update when a pause
// outlives the holder's session, and so does the Mutex; a waiter whose
// session ran out in the queue gets ErrSessionExpired in both: nothing
// parts from the model.
func TestMyEtcdMutex(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: schedules of 2s ticks")
	}
	t.Parallel() // mostly sleep: alongside the Redis tests
	locktest.Run(t, locktest.Config{
		Service:   locktest.EtcdMutex,
		Clients:   2,
		Schedules: ciCut(4, 1),
		New:       newEtcdMutex(""),
	})
}

// TestPlantedEtcdMutexClient: a client that takes Unlock's nil for
// "released" says it released a lock whose key went with its session,
// and one that locks again on its expired session never gets the lock;
// each is caught first on the shortest schedule that shows it.
func TestPlantedEtcdMutexClient(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: schedules of 2s ticks")
	}
	t.Parallel()
	for _, tc := range []struct{ bug, schedule, want string }{
		// A pauses past its session, B takes the lock and writes, A writes
		// and releases (step 12), its key long gone
		{"unlock-nil", "no-lost-update", "step 12 (t=5 A release): reply: model Unlock → no key of its own to delete, real Unlock → its key deleted"},
		// B waits and pauses past its session; its Lock answers
		// ErrSessionExpired at t=5, and its next, on the same session,
		// fails where the model's new session's key holds
		{"stale-session", "relocked", "step 13 (t=6 B acquire): reply: model Lock: key put (token 3), the first → holds, real Lock still waits"},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			t.Parallel()
			r := &recorder{TB: t}
			locktest.Run(r, locktest.Config{Service: locktest.EtcdMutex, Clients: 2, Schedules: ciCut(2, 1), New: newEtcdMutex(tc.bug)})
			if len(r.errs) == 0 {
				t.Fatalf("planted %s on etcd's Mutex: no schedule parts from the model", tc.bug)
			}
			first := r.errs[0]
			if !strings.Contains(first, "schedule "+tc.schedule) || !strings.Contains(first, tc.want) || !strings.Contains(first, "replay: LOCKTEST_SEED=") {
				t.Fatalf("planted %s: want the first report on schedule %s naming %q, with a replay line, got:\n%s", tc.bug, tc.schedule, tc.want, first)
			}
			t.Logf("%d schedules part from the model; the first:\n%s", len(r.errs), first)
		})
	}
}
