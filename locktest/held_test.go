package locktest_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"lockcheck/locktest"
)

// timedLock is the correct client with a read timeout of its own; its
// Release sleeps a tick in the first slow runs, so that they are void
// (played again with a longer tick).
type timedLock struct {
	redisLock
	slow bool
}

func (l *timedLock) Release(ctx context.Context) (bool, error) {
	if l.slow {
		time.Sleep(l.t.TTL / 9) // a tick and a little: TTL is 9.5 ticks
	}
	return l.redisLock.Release(ctx)
}

// timed makes timedLocks with read timeout rt, the first slow runs of
// them slow, and records each run's TTL (9.5 ticks: the run's tick).
type timed struct {
	rt   time.Duration
	slow int
	mu   sync.Mutex
	made int
	ttls []time.Duration
}

func (m *timed) New(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
	m.mu.Lock()
	run := m.made / 2 // two clients a run
	m.made++
	if t.Client == 0 {
		m.ttls = append(m.ttls, t.TTL)
	}
	m.mu.Unlock()
	rc := redis.NewClient(&redis.Options{Addr: t.Addr, DB: t.DB, MaxRetries: -1, PoolSize: 1, DialerRetries: 1, ReadTimeout: m.rt})
	if err := rc.Ping(ctx).Err(); err != nil {
		rc.Close()
		return nil, err
	}
	return &timedLock{redisLock{rc: rc, t: t}, run < m.slow}, nil
}

// ticks is each run's tick, from its TTL.
func (m *timed) ticks() []time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []time.Duration
	for _, ttl := range m.ttls {
		out = append(out, (ttl * 2 / 19).Round(time.Millisecond))
	}
	return out
}

// TestHeldReplyOutlastsReadTimeout: schedule reply-2 holds B's acquire
// reply for 11 ticks (1.1 s at the default 100ms tick). A client whose
// read timeout is shorter gets one error naming the call, the step, the
// hold and the timeout to raise. A client that waits the hold out at the
// configured tick is not failed by void runs played again at longer
// ticks: a run at a doubled tick that holds the reply past its read
// timeout is void, played again at the tick before (1.9 s: 2.2 s at
// 200ms), and the tick of a schedule that holds a reply doubles only
// while its hold stays within 2.4 s (3 s: 4.4 s at 400ms).
// Config.CallTimeout counts from the reply's release (1 s).
func TestHeldReplyOutlastsReadTimeout(t *testing.T) {
	t.Setenv(locktest.EnvSchedule, "reply-2")
	ms := time.Millisecond
	for _, tc := range []struct {
		name      string
		rt        time.Duration // the client's read timeout
		slow      int           // void runs forced
		call      time.Duration // Config.CallTimeout
		want      string        // the error ("": none)
		wantTicks []time.Duration
	}{
		{"shorter than the hold", 500 * ms, 0, 0,
			"schedule reply-2: step 21 (B arrive at t=14): your lock's Acquire: read tcp",
			[]time.Duration{100 * ms}},
		{"outlasted at a doubled tick", 1900 * ms, 1, 0, "", []time.Duration{100 * ms, 200 * ms, 100 * ms}},
		{"doubled within 2.4 s", 3000 * ms, 3, 0, "", []time.Duration{100 * ms, 200 * ms, 200 * ms, 200 * ms}},
		// CallTimeout bounds the call, not the hold
		{"call timeout shorter than the hold", 5000 * ms, 0, 1000 * ms, "", []time.Duration{100 * ms}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &timed{rt: tc.rt, slow: tc.slow}
			r := &recorder{TB: t}
			locktest.Run(r, locktest.Config{Storage: locktest.NoFencing, Clients: 2, CallTimeout: tc.call, New: m.New})
			if tc.want == "" && len(r.errs) > 0 {
				t.Fatalf("want no error, got %q", r.errs)
			}
			if tc.want != "" {
				if len(r.errs) != 1 || !strings.Contains(r.errs[0], tc.want) {
					t.Fatalf("want one error naming %q, got %q", tc.want, r.errs)
				}
				first := strings.SplitN(r.errs[0], "\n", 2)[0]
				for _, w := range []string{"i/o timeout (after 0.", "s, while the run held its reply for 11 ticks: 1.1 s at the 100ms tick)",
					"your client's read timeout (go-redis: Options.ReadTimeout) must outlast the longest hold of a reply, 12 ticks × Config.Tick 100ms = 1.2 s (this schedule's: 11 ticks, 1.1 s): raise it, or lower Config.Tick",
					"replay: LOCKTEST_SEED=1 LOCKTEST_SCHEDULE=reply-2 "} {
					if !strings.Contains(r.errs[0], w) {
						t.Errorf("the error does not say %q:\n%s", w, r.errs[0])
					}
				}
				if !strings.Contains(r.errs[0], "replay:") || strings.Contains(first, "replay:") {
					t.Errorf("want the error on one line and the replay on the next:\n%s", r.errs[0])
				}
			}
			// a loaded machine may void more runs: at the last tick
			got, last := m.ticks(), tc.wantTicks[len(tc.wantTicks)-1]
			if len(got) < len(tc.wantTicks) || !slices.Equal(got[:len(tc.wantTicks)], tc.wantTicks) ||
				slices.ContainsFunc(got[len(tc.wantTicks):], func(d time.Duration) bool { return d != last }) {
				t.Errorf("runs played at ticks %v, want %v (and more at %v on a loaded machine)", got, tc.wantTicks, last)
			}
		})
	}
}

// TestHeldReleaseOutlastsReadTimeout: schedule release-late-held-release
// holds A's release for 8 ticks (0.8 s at the 100ms tick), its request in
// the client's proxy and so its reply. A client whose read timeout is
// shorter gets one error naming its Release, the step, the hold and the
// timeout to raise; one whose timeout outlasts it agrees with the model.
func TestHeldReleaseOutlastsReadTimeout(t *testing.T) {
	t.Setenv(locktest.EnvSchedule, "release-late-held-release")
	for _, tc := range []struct {
		rt   time.Duration
		want string
	}{
		{300 * time.Millisecond, "schedule release-late-held-release: step 26 (A arrive at t=11): your lock's Release: read tcp"},
		{5 * time.Second, ""},
	} {
		t.Run(tc.rt.String(), func(t *testing.T) {
			m := &timed{rt: tc.rt}
			r := &recorder{TB: t}
			locktest.Run(r, locktest.Config{Storage: locktest.NoFencing, Clients: 2, New: m.New})
			switch {
			case tc.want == "" && len(r.errs) > 0:
				t.Fatalf("want no error, got %q", r.errs)
			case tc.want != "" && (len(r.errs) != 1 || !strings.Contains(r.errs[0], tc.want)):
				t.Fatalf("want one error naming %q, got %q", tc.want, r.errs)
			case tc.want != "":
				for _, w := range []string{"i/o timeout (after 0.3 s, while the run held its reply for 8 ticks: 0.8 s at the 100ms tick)",
					"must outlast the longest hold of a reply, 12 ticks × Config.Tick 100ms = 1.2 s (this schedule's: 8 ticks, 0.8 s)"} {
					if !strings.Contains(r.errs[0], w) {
						t.Errorf("the error does not say %q:\n%s", w, r.errs[0])
					}
				}
				t.Logf("read timeout %v: %s", tc.rt, r.errs[0])
			}
		})
	}
}
