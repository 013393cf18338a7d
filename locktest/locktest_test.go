package locktest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"lockcheck/locktest"
	"lockcheck/model"
	"lockcheck/reality"
)

// redisLock is a correct Redis lock client, written as a user would: SET
// NX PX to acquire, a check-and-delete script to release, a
// check-and-PEXPIRE script to extend. bug plants one of the mistakes that
// lock clients are known for.
type redisLock struct {
	rc       *redis.Client
	t        locktest.Target
	bug      string
	sent     time.Time // when the last Acquire sent its request
	released bool      // its last Release was called: the lock is given back
	forgot   bool      // forget-failed-release: it has cleared its lock value
	failed   bool      // its last Release failed (an error)
}

var (
	release = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`)
	extend  = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`)
)

func newLock(bug string) func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
	return func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
		// its read timeout outlasts a held reply: 12 ticks × Tick, 1.2 s
		// (2.4 s in a void run played again)
		rc := redis.NewClient(&redis.Options{Addr: t.Addr, DB: t.DB, MaxRetries: -1, PoolSize: 1, DialerRetries: 1, ReadTimeout: 5 * time.Second})
		// connected before the schedule's clock starts: its first call
		// does not dial
		if err := rc.Ping(ctx).Err(); err != nil {
			rc.Close()
			return nil, err
		}
		return &redisLock{rc: rc, t: t, bug: bug}, nil
	}
}

func (l *redisLock) Acquire(ctx context.Context) (bool, error) {
	l.sent, l.released, l.forgot, l.failed = time.Now(), false, false, false
	won, err := l.rc.SetNX(ctx, l.t.Key, l.t.Value, l.t.TTL).Result()
	if l.bug == "validity-from-reply" { // it starts its TTL's clock when the reply comes, not when it asked
		l.sent = time.Now()
	}
	return won, err
}

// Validity is what is left of the lock by the client's clock: the TTL
// less the time since the acquire was sent, less the drift allowance.
func (l *redisLock) Validity(ctx context.Context) (time.Duration, error) {
	if l.bug == "no-validity-check" { // it never looks at the clock: the whole TTL, always
		return l.t.TTL, nil
	}
	return l.t.TTL - time.Since(l.sent) - l.t.Drift, nil
}

func (l *redisLock) Release(ctx context.Context) (bool, error) {
	l.released = true
	switch l.bug {
	case "release-any": // DEL without looking whose key it is
		n, err := l.rc.Del(ctx, l.t.Key).Result()
		return n == 1, err
	case "forget-failed-release": // it clears its lock value as the call starts, whether the delete is applied or not
		if l.forgot {
			return false, nil // no lock to release, as far as it knows: nothing is sent
		}
		l.forgot = true
	case "release-result-ignored": // the script's 0 is never read: "released"
		_, err := release.Run(ctx, l.rc, []string{l.t.Key}, l.t.Value).Int()
		return true, err
	case "release-del-if-valid": // its own clock says the lock is still its own: a plain DEL, else nothing
		if time.Since(l.sent) >= l.t.TTL-l.t.Drift {
			return false, nil
		}
		n, err := l.rc.Del(ctx, l.t.Key).Result()
		return n == 1, err
	case "retry-release-del": // after a failed release, "make sure": a plain DEL
		if l.failed {
			n, err := l.rc.Del(ctx, l.t.Key).Result()
			l.failed = err != nil
			return n == 1, err
		}
	}
	n, err := release.Run(ctx, l.rc, []string{l.t.Key}, l.t.Value).Int()
	l.failed = err != nil
	if l.bug == "release-error-ignored" && err != nil { // a failed unlock is logged and taken as done
		return true, nil
	}
	return n == 1, err
}

func (l *redisLock) Extend(ctx context.Context) (bool, error) {
	if l.bug == "renew-after-unlock" && l.released { // its watchdog, racing the unlock, takes the lock back: SET NX PX
		ok, err := l.rc.SetNX(ctx, l.t.Key, l.t.Value, l.t.TTL).Result()
		return ok, err
	}
	if l.bug == "extend-recreates" { // SET PX: a key it lost comes back as its own
		err := l.rc.Set(ctx, l.t.Key, l.t.Value, l.t.TTL).Err()
		return err == nil, err
	}
	n, err := extend.Run(ctx, l.rc, []string{l.t.Key}, l.t.Value, l.t.TTL.Milliseconds()).Int()
	if l.bug == "renew-failure-ignored" { // the script's 0 is never read: the worker is told it still holds the lock
		return err == nil, err
	}
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
		{Storage: locktest.NoFencing, Clients: 2, CheckValidity: true, Schedules: 3},
		// its worker stops on a failed renewal; its watchdog may renew
		// once after the unlock (the renewal finds no key of its own)
		{Storage: locktest.NoFencing, Clients: 2, RenewTicks: 3, StopOnFailedRenewal: true, Schedules: 15},
		{Storage: locktest.NoFencing, Clients: 2, RenewTicks: 2, RenewAfterUnlock: true, Schedules: 3},
		// a release lost on the way: it keeps its value and sends it again
		{Storage: locktest.NoFencing, Clients: 2, LoseReleases: true, Schedules: 3},
	} {
		cfg.New = newLock("")
		t.Run(cfg.Design(), func(t *testing.T) { locktest.Run(t, cfg) })
	}
}

// TestCorrectClientLong: the correct fenced client agrees with the model
// on 10,000 random schedules of the default design (three clients, a
// pause, a slow job, a crash and a write held in the network) and on the
// model's shortest runs. Minutes long, so behind LOCKTEST_LONG=1:
//
//	LOCKTEST_LONG=1 go test -run TestCorrectClientLong -v -timeout 60m ./locktest
func TestCorrectClientLong(t *testing.T) {
	if os.Getenv("LOCKTEST_LONG") == "" {
		t.Skip("set LOCKTEST_LONG=1 to play 10,000 schedules (about 20 minutes)")
	}
	locktest.Run(t, locktest.Config{Storage: locktest.TokenOnReadsAndWrites, Schedules: 10000, New: newLock("")})
}

// TestRenewalOptionsAreExercised: the schedules of the correct client's
// renewal options put them to the test, so that its zero findings say
// something: with StopOnFailedRenewal a failed renewal stops a worker (the
// model's replay gives up the job at a renew), and with RenewAfterUnlock a
// renewal follows its client's release.
func TestRenewalOptionsAreExercised(t *testing.T) {
	for _, tc := range []struct {
		cfg  locktest.Config
		seen func(d *model.Design, before *model.State, ev *model.Event) bool
	}{
		{locktest.Config{Clients: 2, RenewTicks: 3, StopOnFailedRenewal: true, Schedules: 15}, func(d *model.Design, before *model.State, ev *model.Event) bool {
			return ev.Action.Kind == model.ActRenew && ev.Flags&model.EvGiveUp != 0
		}},
		{locktest.Config{Clients: 2, RenewTicks: 2, RenewAfterUnlock: true, Schedules: 3}, func(d *model.Design, before *model.State, ev *model.Event) bool {
			return ev.Action.Kind == model.ActRenew && !before.Clients[ev.Action.Client].Believes()
		}},
	} {
		cfg := tc.cfg
		cfg.New = newLock("")
		t.Run(cfg.Design(), func(t *testing.T) {
			scheds, err := locktest.Schedules(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var hits []string
			for _, sc := range scheds {
				d, err := model.ParseDesign(sc.Design)
				if err != nil {
					t.Fatal(err)
				}
				s := model.Init(&d)
				for _, w := range sc.Steps {
					a, err := model.ParseAction(w)
					if err != nil {
						t.Fatal(err)
					}
					next, ev := model.Step(&d, s, a)
					if tc.seen(&d, &s, &ev) {
						hits = append(hits, sc.Name)
						break
					}
					s = next
				}
			}
			if len(hits) == 0 {
				t.Fatalf("no schedule of %d puts the option to the test", len(scheds))
			}
			t.Logf("%d of %d schedules put it to the test: %s", len(hits), len(scheds), strings.Join(hits, ", "))
		})
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
		// A's release is applied and its reply lost (Swarms: unanswered);
		// B takes the lock, and A's release sent again deletes B's key
		// (the model's check-and-delete leaves it). Before that swarm:
		// first on no-lost-update (31 steps: A resumes after its key
		// expired and B took the lock)
		{"release-any", locktest.Config{Clients: 2, Schedules: 1}, "schedule resent-on-other-unanswered ", "removed another's key: model false, real true"},
		// the same release finds B's key and deletes nothing, but says it did
		{"release-result-ignored", locktest.Config{Clients: 2, Schedules: 1}, "schedule resent-on-other-unanswered ", "reply: model release → 0, real release → 1 (deleted)"},
		// A's release is applied and its reply lost: its watchdog, which
		// knows of no release, renews at t=4 and puts the key back (before
		// the unanswered swarm: first on random-7, a renewal after a pause
		// that outlived the key)
		{"extend-recreates", locktest.Config{Clients: 2, RenewTicks: 3, Schedules: 7}, "schedule resent-on-other-unanswered ", "reply: model renew → 0 (not ours), real renew → 1"},
		// the same renewal finds no key, and is reported as a success
		{"renew-failure-ignored", locktest.Config{Clients: 2, RenewTicks: 3, Schedules: 7}, "schedule resent-on-other-unanswered ", "reply: model renew → 0 (not ours), real renew → 1"},
		// the same, with a worker that stops on a failed renewal
		{"renew-failure-ignored", locktest.Config{Clients: 2, RenewTicks: 3, StopOnFailedRenewal: true, Schedules: 7}, "schedule resent-on-other-unanswered ", "reply: model renew → 0 (not ours), real renew → 1"},
		// A's renewal is due at its release (t=3, renew=2) and runs after
		// it; the client's watchdog takes the released key back
		{"renew-after-unlock", locktest.Config{Clients: 2, RenewTicks: 2, RenewAfterUnlock: true, Schedules: 3}, "schedule all-done ", "reply: model renew → 0 (not ours), real renew → 1; key after: model nobody, real A's"},
		// its validity is the whole TTL whenever it is asked: at A's first
		// check a tick of drift is already gone (first on the restart
		// swarm's 3-step exclusive-restart, the shortest with a check),
		// and after a pause past the TTL nothing is left where it says 10
		// ticks
		{"no-validity-check", locktest.Config{Clients: 2, CheckValidity: true, Schedules: 1}, "schedule exclusive-restart ", "reply: model validity left: 9 ticks, real validity left: 10 ticks"},
		// A's release is lost on the way (the proxy drops it) and A sends
		// it again after its timeout; the client cleared its lock value
		// with the failed call, so it sends nothing and its key stays
		{"forget-failed-release", locktest.Config{Clients: 2, LoseReleases: true, Schedules: 1}, "schedule release-resent ", "reply: model release → 1 (deleted), real release → 0"},
		// it measures its validity from the acquire's reply: the same as
		// from the send while the reply comes at once, so only a schedule
		// that holds the reply (Swarms: reply) parts
		{"validity-from-reply", locktest.Config{Clients: 2, CheckValidity: true, Schedules: 1}, "schedule won-late-reply ", "reply: model no validity left: gives up, real validity left: 9 ticks"},
		// after a release that failed it sends a plain DEL "to make
		// sure": A's release is applied and its reply lost (Swarms:
		// unanswered), B takes the lock, and A's DEL three ticks later
		// deletes B's key
		{"retry-release-del", locktest.Config{Clients: 2, Schedules: 1}, "schedule resent-on-other-unanswered ", "removed another's key: model false, real true"},
		// it sends a plain DEL while its clock says the lock is still its
		// own, and nothing once the TTL is over: right after a pause. Its
		// DEL resent after an unanswered release deletes B's key (first),
		// and so does its DEL held in the network (Swarms: held-release),
		// sent at t=3 while valid, landing at t=11 on B's key (checked
		// below)
		{"release-del-if-valid", locktest.Config{Clients: 2, Schedules: 1}, "schedule resent-on-other-unanswered ", "removed another's key: model false, real true"},
		// the same client as forget-failed-release, in the default
		// schedules: the dropped swarm's release is lost on its way
		{"forget-failed-release", locktest.Config{Clients: 2, Schedules: 1}, "schedule release-resent-dropped ", "reply: model release → 1 (deleted), real release → 0"},
		// its release's error (the lock's server is down) is logged and
		// taken as done: only the restart swarm fails a release
		{"release-error-ignored", locktest.Config{Clients: 2, Schedules: 1}, "schedule release-down-restart ", "reply: model release → 0, real release → 1 (deleted)"},
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
			if swarms := map[string][]string{"validity-from-reply": {"reply"}, "release-error-ignored": {"restart", "partition"}, "retry-release-del": {"unanswered"}}[tc.bug]; swarms != nil && !tc.cfg.LoseReleases {
				// no schedule of Design catches it: the swarms' only
				for _, e := range r.errs {
					if name, _, _ := strings.Cut(strings.TrimPrefix(e, "locktest: your client parts from the model on schedule "), " "); !slices.ContainsFunc(swarms, func(s string) bool { return strings.Contains(name, s) }) {
						t.Errorf("planted %s: schedule %s, not one of the swarms %v, parts from the model", tc.bug, name, swarms)
					}
				}
			}
			if tc.bug == "release-del-if-valid" && !slices.ContainsFunc(r.errs, func(e string) bool {
				return strings.Contains(e, "schedule release-late-held-release ") && strings.Contains(e, "removed another's key: model false, real true")
			}) {
				t.Errorf("planted %s: release-late-held-release does not part from the model (its DEL, sent while valid, held past the TTL)", tc.bug)
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

// hanging is a Lock whose Release never returns (it ignores its context)
// until the test ends.
type hanging struct {
	redisLock
	until chan struct{}
}

func (h *hanging) Release(ctx context.Context) (bool, error) {
	<-h.until
	return false, nil
}

// liar is a Lock whose Acquire says it won and failed at once.
type liar struct{ redisLock }

func (l *liar) Acquire(ctx context.Context) (bool, error) {
	return true, fmt.Errorf("connection reset")
}

// badInputs are the bad inputs TestBadInput plays:
// each must give one error naming what was wrong.
func badInputs(t *testing.T) []struct {
	name string
	cfg  locktest.Config
	want string
} {
	good := newLock("")
	wrap := func(f func(l *redisLock) locktest.Lock) func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
		return func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
			l, err := good(ctx, t)
			if err != nil {
				return nil, err
			}
			return f(l.(*redisLock)), nil
		}
	}
	until := make(chan struct{})
	t.Cleanup(func() { close(until) })
	dir := t.TempDir()
	broken := filepath.Join(dir, "redis-server")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho 'FATAL: bad config' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return []struct {
		name string
		cfg  locktest.Config
		want string
	}{
		{"no New", locktest.Config{}, "Config.New is nil"},
		{"clients", locktest.Config{Clients: 7, New: good}, "Config.Clients 7: want 2 or 3"},
		{"service", locktest.Config{Service: 9, New: good}, "Config.Service 9: want locktest.Redis"},
		{"renew", locktest.Config{RenewTicks: 12, New: good}, "Config.RenewTicks 12"},
		{"replica key", locktest.Config{Service: locktest.Replica, Key: "mine", New: good}, "Config.Key \"mine\" with locktest.Replica: want it unset"},
		{"replica losses", locktest.Config{Service: locktest.Replica, LoseReleases: true, New: good}, "Config.LoseReleases with locktest.Replica: not played"},
		{"postgres storage", locktest.Config{Service: locktest.Postgres, Storage: locktest.TokenOnWrites, New: good}, "Config.Storage 1 with locktest.Postgres: want NoFencing"},
		{"postgres renew", locktest.Config{Service: locktest.Postgres, RenewTicks: 3, New: good}, "with locktest.Postgres: not played"},
		{"postgres parallel", locktest.Config{Service: locktest.Postgres, Parallel: 9, New: good}, "Config.Parallel 9 with locktest.Postgres: want 0 (4) to 8"},
		{"advisory on redis", locktest.Config{Advisory: locktest.Transaction, New: good}, "Config.Advisory and Pooled are for locktest.Postgres; want them unset"},
		{"pooled on redis", locktest.Config{Pooled: true, New: good}, "Config.Advisory and Pooled are for locktest.Postgres; want them unset"},
		{"advisory", locktest.Config{Service: locktest.Postgres, Advisory: 5, New: good}, "Config.Advisory 5: want locktest.Session or locktest.Transaction"},
		{"zookeeper storage", locktest.Config{Service: locktest.ZooKeeper, Storage: locktest.TokenOnReadsAndWrites, New: good}, "Config.Storage 2 with locktest.ZooKeeper: want NoFencing"},
		{"zookeeper renew", locktest.Config{Service: locktest.ZooKeeper, RenewTicks: 3, New: good}, "with locktest.ZooKeeper: not played"},
		{"zookeeper key", locktest.Config{Service: locktest.ZooKeeper, Key: "x", New: good}, `Config.Key "x" with locktest.ZooKeeper: want it unset`},
		{"zookeeper parallel", locktest.Config{Service: locktest.ZooKeeper, Parallel: 9, New: good}, "Config.Parallel 9 with locktest.ZooKeeper: want 0 (4) to 8"},
		{"etcd-mutex storage", locktest.Config{Service: locktest.EtcdMutex, Storage: locktest.TokenOnWrites, New: good}, "Config.Storage 1 with locktest.EtcdMutex: want NoFencing"},
		{"etcd-mutex renew", locktest.Config{Service: locktest.EtcdMutex, RenewTicks: 2, New: good}, "RenewTicks with locktest.EtcdMutex: not played"},
		{"etcd-mutex losses", locktest.Config{Service: locktest.EtcdMutex, LoseReleases: true, New: good}, "RenewTicks with locktest.EtcdMutex: not played"},
		{"etcd-mutex validity", locktest.Config{Service: locktest.EtcdMutex, CheckValidity: true, New: good}, "RenewTicks with locktest.EtcdMutex: not played"},
		{"etcd-mutex key", locktest.Config{Service: locktest.EtcdMutex, Key: "q", New: good}, `Config.Key "q" with locktest.EtcdMutex: want it unset`},
		{"etcd-mutex parallel", locktest.Config{Service: locktest.EtcdMutex, Parallel: 17, New: good}, "Config.Parallel 17 with locktest.EtcdMutex: want 0 (8) to 16"},
		{"etcd-mutex tick", locktest.Config{Service: locktest.EtcdMutex, Tick: 4 * time.Second, New: good}, "Config.Tick 4s with locktest.EtcdMutex: want 0 or 2s"},
		{"redlock clients", locktest.Config{Service: locktest.Redlock, Clients: 3, New: good}, "Config.Clients 3 with locktest.Redlock: want 0 or 2"},
		{"redlock key", locktest.Config{Service: locktest.Redlock, Key: "k", New: good}, `Config.Key "k" with locktest.Redlock: want it unset`},
		{"redlock storage", locktest.Config{Service: locktest.Redlock, Storage: locktest.TokenOnWrites, New: good}, "Config.Storage 1 with locktest.Redlock: want NoFencing"},
		{"redlock renew", locktest.Config{Service: locktest.Redlock, RenewTicks: 3, New: good}, "RenewTicks with locktest.Redlock: not played"},
		{"redlock losses", locktest.Config{Service: locktest.Redlock, LoseReleases: true, New: good}, "RenewTicks with locktest.Redlock: not played"},
		{"redlock validity", locktest.Config{Service: locktest.Redlock, CheckValidity: true, New: good}, "RenewTicks with locktest.Redlock: not played"},
		{"parallel", locktest.Config{Parallel: 99, New: good}, "Config.Parallel 99: want 0 (16) to 32"},
		{"lost releases on etcd", locktest.Config{Service: locktest.Etcd, LoseReleases: true, New: good}, "Config.LoseReleases with locktest.Etcd: not played"},
		{"forget on zookeeper", locktest.Config{Service: locktest.ZooKeeper, ForgetFailedRelease: true, New: good}, "Config.ForgetFailedRelease is for locktest.Redis"},
		{"key", locktest.Config{Key: "lock:fence", New: good}, `Config.Key "lock:fence": want 1 to 200 printable ASCII characters`},
		{"key on etcd", locktest.Config{Service: locktest.Etcd, Key: "k", New: good}, `Config.Key "k" with locktest.Etcd: want it unset`},
		{"New fails", locktest.Config{Clients: 2, Schedules: 1, New: func(context.Context, locktest.Target) (locktest.Lock, error) {
			return nil, fmt.Errorf("no such host")
		}}, "Config.New for client A: no such host"},
		{"panic", locktest.Config{Clients: 2, Schedules: 1, New: wrap(func(l *redisLock) locktest.Lock { return &panicky{redisLock: *l} })},
			"B acquire at t=2): your lock's Acquire: Acquire panicked: planted"},
		{"hang", locktest.Config{Clients: 2, Schedules: 1, CallTimeout: 300 * time.Millisecond, New: wrap(func(l *redisLock) locktest.Lock { return &hanging{*l, until} })},
			"A release at t=3): your lock's Release: Release did not return within 300ms"},
		{"garbage", locktest.Config{Clients: 2, Schedules: 1, New: wrap(func(l *redisLock) locktest.Lock { return &liar{*l} })},
			"A acquire at t=1): your lock's Acquire: Acquire returned true and an error (connection reset)"},
		{"no Extend", locktest.Config{Clients: 2, Schedules: 1, RenewTicks: 3, New: wrap(func(l *redisLock) locktest.Lock { return struct{ locktest.Lock }{l} })},
			"has no Extend method (implement locktest.Extender)"},
		{"server will not start", locktest.Config{Clients: 2, Schedules: 1, ServerBinary: broken, New: good},
			"start the redis-server (Config.ServerBinary \"" + broken + "\"): " + broken + " exited at start (exit status 1): FATAL: bad config"},
	}
}

// leftovers counts this process's child processes (the redis-servers it
// started) and the server folders it made in the temporary directory.
func leftovers(t *testing.T) (procs, dirs int) {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid …: comm may hold spaces, so after the ")"
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		if fields := strings.Fields(rest); len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) {
			procs++
		}
	}
	mine, _ := filepath.Glob(filepath.Join(os.TempDir(), "lockcheck-redis-"+strconv.Itoa(os.Getpid())+"-*"))
	return procs, len(mine)
}

// TestBadInput: a bad Config, a New that fails, an Acquire that panics or
// answers true and an error, a Release that hangs and a redis-server that
// will not start each give one clear error naming what was wrong (the
// call and the schedule's step), and no hang. Each, and a good run, leaves
// no redis-server and no server folder behind: they are counted before
// and after.
func TestBadInput(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to count processes in")
	}
	// the count sees a server and its folder
	p0, d0 := leftovers(t)
	bin, err := reality.FindServer()
	if err != nil {
		t.Skip(err)
	}
	s, err := reality.StartServer(context.Background(), bin)
	if err != nil {
		t.Fatal(err)
	}
	p1, d1 := leftovers(t)
	s.Stop()
	if p1 != p0+1 || d1 != d0+1 {
		t.Fatalf("a running server: %d child processes and %d server folders, want %d and %d", p1, d1, p0+1, d0+1)
	}
	cases := append(badInputs(t), struct {
		name string
		cfg  locktest.Config
		want string
	}{"good", locktest.Config{Clients: 2, Schedules: 1, Parallel: 9, New: newLock("")}, ""})
	for _, tc := range cases {
		p0, d0 := leftovers(t)
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			locktest.Run(r, tc.cfg)
			switch {
			case tc.want == "" && len(r.errs) > 0:
				t.Fatalf("the good run failed: %q", r.errs)
			case tc.want != "" && (len(r.errs) != 1 || !strings.Contains(r.errs[0], tc.want)):
				t.Fatalf("want one error naming %q, got %q", tc.want, r.errs)
			}
		})
		if p, d := leftovers(t); p != p0 || d != d0 {
			t.Errorf("%s: %d child processes and %d server folders before, %d and %d after", tc.name, p0, d0, p, d)
		}
	}
}
