package locktest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"lockcheck/locktest"
)

// The lock libraries as users of locktest: each adapter is what a user of
// the library would write. Their rows renew (RenewTicks), so Extend and
// Refresh are called, and the seventh random schedule renews after a pause
// that outlived the key.

// redsyncLock is redsync v4 on one node: TryLockContext (one try; the
// schedule polls), ExtendContext, UnlockContext; opts are the user's.
type redsyncLock struct {
	rc *redis.Client
	m  *redsync.Mutex
}

func newRedsync(opts ...redsync.Option) func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
	return func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
		rc := redis.NewClient(&redis.Options{Addr: t.Addr, DB: t.DB, MaxRetries: -1})
		// one try (the schedule polls); each node's request times out after
		// expiry × timeout factor (mutex.go's lockContext), 24ms for this
		// TTL with the default 0.05: a loaded machine answers later
		opts := append([]redsync.Option{redsync.WithExpiry(t.TTL), redsync.WithTries(1), redsync.WithTimeoutFactor(0.5),
			redsync.WithGenValueFunc(func() (string, error) { return t.Value, nil })}, opts...)
		return &redsyncLock{rc: rc, m: redsync.New(goredis.NewPool(rc)).NewMutex(t.Key, opts...)}, rc.Ping(ctx).Err()
	}
}

// refused reports whether a redsync error is its "no" (taken, failed,
// expired) rather than a failure.
func refused(err error) bool {
	var taken *redsync.ErrTaken
	return err == nil || errors.Is(err, redsync.ErrFailed) || errors.Is(err, redsync.ErrExtendFailed) ||
		errors.Is(err, redsync.ErrLockAlreadyExpired) || errors.As(err, &taken)
}

func (l *redsyncLock) Acquire(ctx context.Context) (bool, error) {
	err := l.m.TryLockContext(ctx)
	if err != nil && refused(err) {
		return false, nil
	}
	return err == nil, err
}

func (l *redsyncLock) Release(ctx context.Context) (bool, error) {
	ok, err := l.m.UnlockContext(ctx)
	if !ok && refused(err) {
		return false, nil
	}
	return ok, err
}

func (l *redsyncLock) Extend(ctx context.Context) (bool, error) {
	ok, err := l.m.ExtendContext(ctx)
	if !ok && refused(err) {
		return false, nil
	}
	return ok, err
}

func (l *redsyncLock) Close() error { return l.rc.Close() }

// redislockLock is bsm/redislock: Obtain (no retry), Lock.Refresh,
// Lock.Release, the lock's value given as its token.
type redislockLock struct {
	rc   *redis.Client
	c    *redislock.Client
	t    locktest.Target
	lock *redislock.Lock
}

func newRedislock(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
	rc := redis.NewClient(&redis.Options{Addr: t.Addr, DB: t.DB, MaxRetries: -1})
	return &redislockLock{rc: rc, c: redislock.New(rc), t: t}, rc.Ping(ctx).Err()
}

func (l *redislockLock) Acquire(ctx context.Context) (bool, error) {
	lk, err := l.c.Obtain(ctx, l.t.Key, l.t.TTL, &redislock.Options{Token: l.t.Value})
	if errors.Is(err, redislock.ErrNotObtained) {
		return false, nil
	}
	l.lock = lk
	return err == nil, err
}

func (l *redislockLock) Release(ctx context.Context) (bool, error) {
	err := l.lock.Release(ctx)
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return false, nil
	}
	return err == nil, err
}

func (l *redislockLock) Extend(ctx context.Context) (bool, error) {
	err := l.lock.Refresh(ctx, l.t.TTL, nil)
	if errors.Is(err, redislock.ErrNotObtained) {
		return false, nil
	}
	return err == nil, err
}

func (l *redislockLock) Close() error { return l.rc.Close() }

// refusesLateReply checks the reports of the reply swarm's schedules
// (an acquire's reply held in the network): each must be lib's acquire
// refused where the model's trusting client takes the late reply as won,
// as a library does that checks the validity left once the reply comes
// (redsync: Mutex.lockContext's until; rueidislock gives up a SET whose
// reply is slow and deletes its key). It returns the other reports.
func refusesLateReply(t *testing.T, lib string, errs []string) (others []string) {
	t.Helper()
	late := 0
	for _, e := range errs {
		if name, _, _ := strings.Cut(strings.TrimPrefix(e, "locktest: your client parts from the model on schedule "), " "); !strings.Contains(name, "reply") {
			others = append(others, e)
			continue
		}
		late++
		if !strings.Contains(e, "reply: model held acquire reply arrives → OK, real held acquire reply arrives → refused") {
			t.Errorf("%s parts from the model on a reply schedule otherwise than by refusing the late reply:\n%s", lib, e)
		}
	}
	t.Logf("%s refuses an acquire reply held in the network where the trusting model takes it (%d reply schedules)", lib, late)
	return others
}

// TestLibraries plays the libraries with renewal: redsync and redislock
// agree with the model on every schedule (a failed Extend or Refresh
// reports false, as the model's renewal does); redsync with
// WithSetNXOnExtend re-creates the key its holder lost
// (touchWithSetNXScript in redsync's scripts.go: PEXPIRE if ours, else SET
// NX PX), so A's renewal after its pause outlived the key says "extended"
// where the model's fails, and A's release then deletes a key the model
// says is gone.
func TestLibraries(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: three locktest runs (about a minute)")
	}
	for _, tc := range []struct {
		name  string
		new   func(ctx context.Context, t locktest.Target) (locktest.Lock, error)
		first string // the first schedule reported ("": none)
		want  string
	}{
		{"redsync", newRedsync(), "", ""},
		// first where A's Unlock is applied and its reply lost (Swarms:
		// unanswered): its renewal at t=4 re-creates the released key
		{"redsync-setnx-on-extend", newRedsync(redsync.WithSetNXOnExtend()), "schedule resent-on-other-unanswered ", "reply: model renew → 0 (not ours), real renew → 1"},
		{"redislock", newRedislock, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			locktest.Run(r, locktest.Config{Clients: 2, RenewTicks: 3, Schedules: 7, New: tc.new})
			r.errs = refusesLateReply(t, tc.name, r.errs)
			switch {
			case tc.first == "" && len(r.errs) > 0:
				t.Fatalf("%s parts from the model on %d schedules; the first:\n%s", tc.name, len(r.errs), r.errs[0])
			case tc.first != "" && len(r.errs) == 0:
				t.Fatalf("%s: no schedule parts from the model", tc.name)
			case tc.first != "" && (!strings.Contains(r.errs[0], tc.first) || !strings.Contains(r.errs[0], tc.want)):
				t.Fatalf("%s: want the first report on %q naming %q, got:\n%s", tc.name, tc.first, tc.want, r.errs[0])
			case tc.first != "":
				t.Logf("%s: caught on %d schedules; the first:\n%s", tc.name, len(r.errs), r.errs[0])
			}
		})
	}
}
