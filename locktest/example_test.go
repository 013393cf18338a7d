package locktest_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"lockcheck/locktest"
)

// myLock is the adapter: your lock client behind locktest.Lock (here a
// plain go-redis client, SET NX PX and a check-and-delete script).
type myLock struct {
	rc *redis.Client
	t  locktest.Target
}

var cad = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`)

func (l *myLock) Acquire(ctx context.Context) (bool, error) {
	return l.rc.SetNX(ctx, l.t.Key, l.t.Value, l.t.TTL).Result()
}

func (l *myLock) Release(ctx context.Context) (bool, error) {
	n, err := cad.Run(ctx, l.rc, []string{l.t.Key}, l.t.Value).Int()
	return n == 1, err
}

func (l *myLock) Close() error { return l.rc.Close() }

// TestMyLock is the test you copy into your module: locktest starts a
// redis-server, plays the model's schedules against two instances of your
// client, and reports where it parts from the model.
func TestMyLock(t *testing.T) {
	locktest.Run(t, locktest.Config{
		Service: locktest.Redis,
		Storage: locktest.NoFencing,
		Clients: 2,
		// Schedules: 10 random schedules follow the model's shortest runs
		// by default; a few here keep this test short
		Schedules: 3,
		New: func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
			// no retries: a call while the lock's server is down (the
			// restart schedules) fails at once, within its tick, instead
			// of retrying for a second (the run would be void, and played
			// again with longer ticks)
			// a read timeout that outlasts a reply locktest holds: up to
			// 12 ticks × Config.Tick, 1.2 s (2.4 s in a void run played
			// again); go-redis's default was 3 s before v9.22
			rc := redis.NewClient(&redis.Options{Addr: t.Addr, DB: t.DB, MaxRetries: -1, DialerRetries: 1, ReadTimeout: 5 * time.Second})
			// connect now, before the schedule's clock starts
			return &myLock{rc: rc, t: t}, rc.Ping(ctx).Err()
		},
	})
}

// Example shows the adapter and the test above: a Lock for your client,
// and a Config that names the service and what your job does with storage.
func Example() {
	cfg := locktest.Config{
		Service: locktest.Redis,
		Storage: locktest.TokenOnReadsAndWrites,
		New: func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
			return &myLock{rc: redis.NewClient(&redis.Options{Addr: t.Addr, DB: t.DB}), t: t}, nil
		},
	}
	_ = cfg // in a test: locktest.Run(t, cfg)
}
