package locktest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"lockcheck/locktest"
)

// redisLock is a correct Redis lock client, written as a user would: SET
// NX PX to acquire, a check-and-delete script to release, a
// check-and-PEXPIRE script to extend. bug plants one of the mistakes that
// lock clients are known for.
type redisLock struct {
	rc  *redis.Client
	t   locktest.Target
	bug string
}

var (
	release = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`)
	extend  = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`)
)

func newLock(bug string) func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
	return func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
		rc := redis.NewClient(&redis.Options{Addr: t.Addr, DB: t.DB, MaxRetries: -1, PoolSize: 1})
		return &redisLock{rc: rc, t: t, bug: bug}, nil
	}
}

func (l *redisLock) Acquire(ctx context.Context) (bool, error) {
	return l.rc.SetNX(ctx, l.t.Key, l.t.Value, l.t.TTL).Result()
}

func (l *redisLock) Release(ctx context.Context) (bool, error) {
	switch l.bug {
	case "release-any": // DEL without looking whose key it is
		n, err := l.rc.Del(ctx, l.t.Key).Result()
		return n == 1, err
	case "release-result-ignored": // the script's 0 is never read: "released"
		_, err := release.Run(ctx, l.rc, []string{l.t.Key}, l.t.Value).Int()
		return true, err
	}
	n, err := release.Run(ctx, l.rc, []string{l.t.Key}, l.t.Value).Int()
	return n == 1, err
}

func (l *redisLock) Extend(ctx context.Context) (bool, error) {
	if l.bug == "extend-recreates" { // SET PX: a key it lost comes back as its own
		err := l.rc.Set(ctx, l.t.Key, l.t.Value, l.t.TTL).Err()
		return err == nil, err
	}
	n, err := extend.Run(ctx, l.rc, []string{l.t.Key}, l.t.Value, l.t.TTL.Milliseconds()).Int()
	return n == 1, err
}

func (l *redisLock) Close() error { return l.rc.Close() }

// TestCorrectClient: a correct client agrees with the model on every
// schedule, fenced or not, with and without renewal.
func TestCorrectClient(t *testing.T) {
	for _, cfg := range []locktest.Config{
		{Storage: locktest.NoFencing, Clients: 2, Schedules: 3},
		{Storage: locktest.TokenOnReadsAndWrites, Clients: 2, Schedules: 3},
		{Storage: locktest.NoFencing, Clients: 2, RenewTicks: 3, Schedules: 3},
	} {
		cfg.New = newLock("")
		t.Run(cfg.Design(), func(t *testing.T) { locktest.Run(t, cfg) })
	}
}

// recorder keeps the errors a Run reports instead of failing the test.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Error(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }

// TestPlantedClientsAreCaught plants a mistake in the client and checks
// that Run reports it, first on the shortest schedule that shows it.
func TestPlantedClientsAreCaught(t *testing.T) {
	for _, tc := range []struct {
		bug   string
		cfg   locktest.Config
		first string // the first schedule reported
		want  string // a difference that must be named
	}{
		// A resumes after its key expired and B took the lock; its release
		// deletes B's key (the model's check-and-delete leaves it)
		{"release-any", locktest.Config{Clients: 2, Schedules: 1}, "schedule no-lost-update ", "removed another's key: model false, real true"},
		// the same release finds B's key and deletes nothing, but says it did
		{"release-result-ignored", locktest.Config{Clients: 2, Schedules: 1}, "schedule no-lost-update ", "reply: model release → 0, real release → 1 (deleted)"},
		// A pauses past its TTL; its renewal after the pause puts its key back
		{"extend-recreates", locktest.Config{Clients: 2, RenewTicks: 3, Schedules: 7}, "schedule random-7 ", "reply: model renew → 0 (not ours), real renew → 1"},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			cfg := tc.cfg
			cfg.New = newLock(tc.bug)
			r := &recorder{TB: t}
			locktest.Run(r, cfg)
			if len(r.errs) == 0 {
				t.Fatalf("planted %s: no schedule parts from the model", tc.bug)
			}
			first := r.errs[0]
			if !strings.Contains(first, tc.first) || !strings.Contains(first, tc.want) || !strings.Contains(first, "replay: LOCKTEST_SEED=") {
				t.Fatalf("planted %s: want the first report on %q naming %q with a replay line, got:\n%s", tc.bug, tc.first, tc.want, first)
			}
			t.Logf("planted %s: %d schedules part from the model; the first:\n%s", tc.bug, len(r.errs), first)
		})
	}
}

// panicky is a Lock whose Acquire panics on its second call.
type panicky struct {
	redisLock
	calls int
}

func (p *panicky) Acquire(ctx context.Context) (bool, error) {
	if p.calls++; p.calls == 2 {
		panic("planted")
	}
	return p.redisLock.Acquire(ctx)
}

// TestBadInput: a bad Config, a New that fails and an Acquire that panics
// each give one clear error naming what was wrong (the call and the
// schedule's step), and no hang.
func TestBadInput(t *testing.T) {
	good := newLock("")
	for _, tc := range []struct {
		name string
		cfg  locktest.Config
		want string
	}{
		{"no New", locktest.Config{}, "Config.New is nil"},
		{"clients", locktest.Config{Clients: 7, New: good}, "Config.Clients 7: want 2 or 3"},
		{"service", locktest.Config{Service: 9, New: good}, "Config.Service 9: want locktest.Redis"},
		{"renew", locktest.Config{RenewTicks: 12, New: good}, "Config.RenewTicks 12"},
		{"New fails", locktest.Config{Clients: 2, Schedules: 1, New: func(context.Context, locktest.Target) (locktest.Lock, error) {
			return nil, fmt.Errorf("no such host")
		}}, "Config.New for client A: no such host"},
		{"panic", locktest.Config{Clients: 2, Schedules: 1, New: func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
			l, _ := good(ctx, t)
			return &panicky{redisLock: *l.(*redisLock)}, nil
		}}, "B acquire at t=3): your lock's Acquire: Acquire panicked: planted"},
		{"no Extend", locktest.Config{Clients: 2, Schedules: 1, RenewTicks: 3, New: func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
			l, _ := good(ctx, t)
			return struct{ locktest.Lock }{l}, nil
		}}, "has no Extend method (implement locktest.Extender)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			locktest.Run(r, tc.cfg)
			if len(r.errs) != 1 || !strings.Contains(r.errs[0], tc.want) {
				t.Fatalf("want one error naming %q, got %q", tc.want, r.errs)
			}
		})
	}
}
