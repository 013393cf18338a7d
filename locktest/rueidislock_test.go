package locktest_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"lockcheck/locktest"
)

// rueidislock (github.com/redis/rueidis/rueidislock, read in v1.0.79,
// lock.go) as a user of locktest. What it does, and the design it maps to:
//
//   - TryWithContext(ctx, name) tries once (locker.tryonce → try): for each
//     of KeyMajority*2-1 keys prefix:i:name it runs a SET NX PXAT script
//     (acqat: the deadline is the try's start + KeyValidity by the
//     client's clock), each bounded by TryNextAfter; it holds the lock with
//     KeyMajority of them. The keys live on one Redis (or cluster): on one
//     node they share the deadline, so KeyMajority buys nothing against
//     these faults; the rows play KeyMajority 1, one key prefix:0:name,
//     which is Config.Key (locktest's observer looks at one key).
//   - Its value is a random one per try (random()), not Target.Value: the
//     adapter's Owns answers from the values its client sent.
//   - It renews by itself: monitoring, one goroutine per key, runs the
//     extend script (PEXPIREAT now + KeyValidity if the key is still its
//     value) every ExtendInterval (default KeyValidity/2), and at once on
//     a client-side-caching invalidation of the key (with the same
//     deadline: a check, not a renewal). The first extend that finds the
//     key not its own ends that goroutine without a delete, and once the
//     majority's goroutines ended, the lock's context is cancelled: the
//     "context cancelled on lost lock". There is no extend call: Extend
//     here waits for the library's own renewal of the period (ExtendInterval
//     is set to the model's renew=k ticks) and reports it, or reports false
//     once the lock's context is cancelled. Without renewal
//     (ExtendInterval beyond KeyValidity) its first extend comes after
//     the key expired and only cancels the context.
//   - The cancel func it returns is the unlock: it cancels the lock's
//     context, monitoring runs the delete script (if the key is still its
//     value) and cancel waits for it (done). It reports nothing: Release
//     reports the delete script's reply, which the library received and
//     dropped (`_ = m.script(context.Background(), delkey, …)`). A
//     delete that fails is not sent again, and the lock is gone from the
//     client all the same: a release lost on its way leaves the key to
//     its KeyValidity. The rows say so (Config.ForgetFailedRelease: the
//     model's release-fail=forget); with the default retry, the dropped
//     swarm's release-resent-dropped parts (model release → 1, real 0,
//     the key still A's).
//   - A job that watches the lock's context stops when the library loses
//     the lock (renew-fail=stop); one that does not goes on
//     (renew-fail=ignore, its watchdog stopped, which for a lost key is
//     the same: every later renewal would fail too).
//
// What the adapter cannot show: the job here learns of a lost lock at the
// model's renew steps (locktest calls Extend there), where a job that
// selects on the context learns of it as soon as the library does (an
// invalidation at the key's expiry). And TryNextAfter is set to half a
// tick: its default 20ms would refuse a slow
// reply on a loaded machine, a timing the schedules do not model: a tick
// is beyond the conductor's window, so a reply that late voids the run
// (replayed with a longer tick).

// rueidis' lock scripts, as lock.go defines them (delkey, extend, acqat):
// the spy tells them apart by their SHA-1. A library whose scripts change
// sends one the spy does not know, and the adapter fails the run.
const (
	rueidisDelkey = `if redis.call("GET",KEYS[1]) == ARGV[1] then return redis.call("DEL",KEYS[1]) end;return 0`
	rueidisExtend = `if redis.call("GET",KEYS[1]) == ARGV[1] then local r = redis.call("PEXPIREAT",KEYS[1],ARGV[2]);redis.call("GET",KEYS[1]);return r end;return 0`
	rueidisAcqat  = `local r = redis.call("SET",KEYS[1],ARGV[1],"NX","PXAT",ARGV[2]);redis.call("GET",KEYS[1]);return r`
)

func sha(s string) string { h := sha1.Sum([]byte(s)); return hex.EncodeToString(h[:]) }

var rueidisScripts = map[string]string{sha(rueidisDelkey): "delkey", sha(rueidisExtend): "extend", sha(rueidisAcqat): "acquire"}

// rueidisSpy is the library's rueidis.Client (LockerOption.ClientBuilder)
// with a look at its lock scripts: it changes no request and no reply,
// and records the values the client sent, the deadlines its extensions
// set and the replies of its deletes.
type rueidisSpy struct {
	rueidis.Client
	mu       sync.Mutex
	values   map[string]bool  // every value a script of this client carried
	acquired int64            // the deadline (unix ms) its last won SET NX PXAT set
	extended int64            // the latest deadline (unix ms) an extend set
	deleted  map[string]int64 // the delete script's reply, by value
	unknown  string           // a script the spy does not know ("": none)
	changed  chan struct{}    // closed and replaced at each record
}

func (s *rueidisSpy) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	args := slices.Clone(cmd.Commands()) // Do recycles the command
	resp := s.Client.Do(ctx, cmd)
	if len(args) < 6 || (args[0] != "EVALSHA" && args[0] != "EVAL") {
		return resp
	}
	id := args[1]
	if args[0] == "EVAL" {
		id = sha(args[1])
	}
	val, arg := args[4], args[5]
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values[val] = true
	switch rueidisScripts[id] {
	case "extend":
		if n, err := resp.AsInt64(); err == nil && n == 1 {
			if at, err := strconv.ParseInt(arg, 10, 64); err == nil && at > s.extended {
				s.extended = at
			}
		}
	case "delkey":
		if n, err := resp.AsInt64(); err == nil {
			s.deleted[val] = n
		}
	case "acquire":
		if resp.Error() == nil { // "OK": the key is its own until arg
			s.acquired, _ = strconv.ParseInt(arg, 10, 64)
		}
	default:
		s.unknown = strings.Join(args[:3], " ")
	}
	close(s.changed)
	s.changed = make(chan struct{})
	return resp
}

// rueidisOpts are the library's options a row plays.
type rueidisOpts struct {
	renewTicks int // ExtendInterval in ticks of the TTL's 10 (0: none before the key expires)
	bug        string
}

// rueidisLock is one client process's Locker, with the lock it holds.
type rueidisLock struct {
	run    context.Context // the run's: the lock's context outlives each call
	locker rueidislock.Locker
	spy    *rueidisSpy
	name   string
	bug    string
	lock   context.Context // the lock's context (nil: no lock)
	unlock context.CancelFunc
	until  int64 // the deadline of the renewal Extend last reported
}

func newRueidislock(o rueidisOpts) func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
	return func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
		spy := &rueidisSpy{values: map[string]bool{}, deleted: map[string]int64{}, changed: make(chan struct{})}
		interval := 2 * t.TTL // no renewal: the first extend comes after the key expired
		if o.renewTicks > 0 {
			interval = t.TTL * time.Duration(o.renewTicks) / 10
		}
		prefix, name, _ := strings.Cut(rueidisKey, ":0:")
		lk, err := rueidislock.NewLocker(rueidislock.LockerOption{
			// DisableRetry: a call while the lock's server is down (the
			// restart schedules) fails within its tick
			ClientOption:   rueidis.ClientOption{InitAddress: []string{t.Addr}, SelectDB: t.DB, DisableRetry: true},
			KeyPrefix:      prefix,
			KeyMajority:    1,
			KeyValidity:    t.TTL,
			ExtendInterval: interval,
			TryNextAfter:   t.TTL / 10, // a tick (see above)
			NoLoopTracking: true,       // redis-server ≥ 7.0.5: no invalidations of its own writes
			ClientBuilder: func(opt rueidis.ClientOption) (rueidis.Client, error) {
				c, err := rueidis.NewClient(opt) // dials now, before the schedule's clock
				spy.Client = c
				return spy, err
			},
		})
		if err != nil {
			return nil, err
		}
		// its scripts loaded before the clock starts, as a PING connects:
		// the first EVALSHA of a step would else cost a NOSCRIPT and an EVAL
		for _, sc := range []string{rueidisAcqat, rueidisExtend, rueidisDelkey} {
			if err := spy.Do(ctx, spy.B().ScriptLoad().Script(sc).Build()).Error(); err != nil {
				lk.Close()
				return nil, err
			}
		}
		return &rueidisLock{run: ctx, locker: lk, spy: spy, name: name, bug: o.bug}, nil
	}
}

// rueidisKey is the rows' lock key: prefix "lock", name "order-42".
const rueidisKey = "lock:0:order-42"

func (l *rueidisLock) Acquire(ctx context.Context) (bool, error) {
	lock, unlock, err := l.locker.TryWithContext(l.run, l.name)
	if err := l.spy.check(); err != nil {
		return false, err
	}
	// ErrNotLocked: the key is another's; DeadlineExceeded: no reply
	// within TryNextAfter, a tick, which voids the run anyway (a reply
	// after the conductor's window), and the library deletes the key if
	// its SET landed: either way it holds no lock
	if errors.Is(err, rueidislock.ErrNotLocked) || errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// a renewal is a deadline past the acquire's: an invalidation's check
	// (monitoring's csc case) sends the deadline the key has already
	l.spy.mu.Lock()
	l.until = l.spy.acquired
	l.spy.mu.Unlock()
	l.lock, l.unlock = lock, unlock
	return true, nil
}

// Extend waits for the library's renewal of this period: a deadline
// later than the one it last reported; false once the lock's context is
// cancelled (an extend found the key not its own).
func (l *rueidisLock) Extend(ctx context.Context) (bool, error) {
	if l.lock == nil {
		return false, nil
	}
	if l.bug == "extend-true" { // it trusts its lock without asking the library
		return true, nil
	}
	for {
		l.spy.mu.Lock()
		at, changed := l.spy.extended, l.spy.changed
		l.spy.mu.Unlock()
		if at > l.until {
			l.until = at
			return true, nil
		}
		select {
		case <-l.lock.Done():
			return false, nil
		case <-changed:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

func (l *rueidisLock) Release(ctx context.Context) (bool, error) {
	if l.lock == nil {
		return false, nil
	}
	l.unlock() // cancels the lock's context; waits for monitoring's delete
	l.lock = nil
	if err := l.spy.check(); err != nil {
		return false, err
	}
	l.spy.mu.Lock()
	defer l.spy.mu.Unlock()
	for v := range l.spy.values { // its one won value's delete (a lost lock's is never sent)
		if l.spy.deleted[v] == 1 {
			delete(l.spy.deleted, v)
			return true, nil
		}
	}
	return false, nil
}

func (l *rueidisLock) Owns(v string) bool {
	l.spy.mu.Lock()
	defer l.spy.mu.Unlock()
	return l.spy.values[v]
}

func (l *rueidisLock) Close() error { l.locker.Close(); return nil }

func (s *rueidisSpy) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unknown != "" {
		return errors.New("rueidislock sent a script the adapter does not know (" + s.unknown + "): its lock.go changed; read it again")
	}
	return nil
}

// TestRueidislock plays rueidislock with each option that changes the
// outcome, each row against the model's design for it (Config.Design):
// renewal every 3 ticks with a job that stops on the cancelled context
// (renew-fail=stop) or goes on (renew-fail=ignore), and no renewal before
// the key expires. Each must agree with the model on every schedule; the
// outcomes differ between rows as the model's do. The planted row's
// adapter reports the lock extended without asking the library, and is
// caught.
func TestRueidislock(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: four locktest runs")
	}
	for _, tc := range []struct {
		name string
		o    rueidisOpts
		cfg  locktest.Config
		want string // the planted row: what the first report names
	}{
		{name: "renew-stop", o: rueidisOpts{renewTicks: 3}, cfg: locktest.Config{RenewTicks: 3, StopOnFailedRenewal: true}},
		{name: "renew-ignore", o: rueidisOpts{renewTicks: 3}, cfg: locktest.Config{RenewTicks: 3}},
		{name: "no-renew", cfg: locktest.Config{}},
		{name: "planted-extend-true", o: rueidisOpts{renewTicks: 3, bug: "extend-true"}, cfg: locktest.Config{RenewTicks: 3, StopOnFailedRenewal: true},
			want: "reply: model renew → 0 (not ours), real renew → 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each on redis-servers of its own; mostly sleep
			cfg := tc.cfg
			cfg.Clients, cfg.Schedules, cfg.Key, cfg.New = 2, 7, rueidisKey, newRueidislock(tc.o)
			cfg.ForgetFailedRelease = true // its unlock never sends a failed delete again
			r := &recorder{TB: t}
			locktest.Run(r, cfg)
			r.errs = refusesLateReply(t, "rueidislock "+tc.name, r.errs)
			switch {
			case tc.want == "" && len(r.errs) > 0:
				t.Fatalf("rueidislock %s (design %s) parts from the model on %d schedules; the first:\n%s", tc.name, cfg.Design(), len(r.errs), r.errs[0])
			case tc.want != "" && len(r.errs) == 0:
				t.Fatalf("planted %s: no schedule parts from the model", tc.name)
			case tc.want != "" && !strings.Contains(r.errs[0], tc.want):
				t.Fatalf("planted %s: want the first report naming %q, got:\n%s", tc.name, tc.want, r.errs[0])
			case tc.want != "":
				t.Logf("planted %s: caught on %d schedules; the first:\n%s", tc.name, len(r.errs), r.errs[0])
			}
		})
	}
}
