package reality

import (
	"bufio"
	"cmp"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// staleConn is a connection of an "earlier run" on db of addr: after
// delay it sends cmd (a SET of the run's lock key, as a late SET NX of a
// client of the last run would), and it closes after that unless leak.
func staleConn(t *testing.T, addr string, db int, delay time.Duration, cmd string, leak bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write([]byte("SELECT " + string(rune('0'+db)) + "\r\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("SELECT: %q %v", line, err)
	}
	go func() {
		time.Sleep(delay)
		c.Write([]byte(cmd + "\r\n"))
		if !leak {
			c.Close()
		}
	}()
}

// TestSetupSeesNothingOfAnEarlierRun: a connection of an earlier run on
// the run's databases that sends a SET after the setup began (a request
// still on its way when that run ended) must not land after the reset;
// the setup waits for its end. One that never closes is killed after
// drainBound, and what it sends after that never lands. Without
// drainEarlier in setup the first case finds the stale key after setup.
func TestSetupSeesNothingOfAnEarlierRun(t *testing.T) {
	s := lockServer(t, false)
	d, err := model.ParseDesign("redis/cad/none/plain")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		db    int
		delay time.Duration
		leak  bool
	}{
		{"closes after a late SET on the lock database", 2, 300 * time.Millisecond, false},
		{"closes after a late SET on the storage database", 3, 300 * time.Millisecond, false},
		{"never closes, SET after the bound", 2, drainBound + time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := LockKey
			if tc.db == 3 {
				key = storageKeys[0]
			}
			staleConn(t, s.Addr(), tc.db, tc.delay, "SET "+key+" stale", tc.leak)
			lock := redis.NewClient(clientOptions(s.Addr(), 2))
			defer lock.Close()
			store := redis.NewClient(clientOptions(s.Addr(), 3))
			defer store.Close()
			began := time.Now()
			if err := setup(ctx, lock, store, &d, storageFor(&d), LockKey); err != nil {
				t.Fatal(err)
			}
			took := time.Since(began)
			if !tc.leak && took < tc.delay {
				t.Errorf("setup took %v, before the earlier run's connection sent its SET at %v", took, tc.delay)
			}
			if tc.leak && took < drainBound {
				t.Errorf("setup took %v, less than the bound %v it waits before it kills a connection", took, drainBound)
			}
			time.Sleep(tc.delay - min(took, tc.delay) + 200*time.Millisecond) // past the stale SET
			c := lock
			if tc.db == 3 {
				c = store
			}
			v, err := c.Get(ctx, key).Result()
			if err != nil && err != redis.Nil {
				t.Fatal(err)
			}
			if strings.Contains(v, "stale") {
				t.Errorf("%s is %q after setup: the earlier run's SET landed in this run", key, v)
			}
		})
	}
}

// TestEarlierConns reads CLIENT LIST's lines: the connections on a
// database, less the run's own.
func TestEarlierConns(t *testing.T) {
	list := "id=3 addr=127.0.0.1:5 laddr=127.0.0.1:6379 fd=8 name= db=2 cmd=client|list\n" +
		"id=4 addr=127.0.0.1:6 laddr=127.0.0.1:6379 fd=9 name= db=2 cmd=set\n" +
		"id=5 addr=127.0.0.1:7 laddr=127.0.0.1:6379 fd=10 name= db=12 cmd=get\n" +
		"id=6 addr=127.0.0.1:8 laddr=127.0.0.1:6379 fd=11 name= db=3 cmd=get\n" +
		"id=7 addr=127.0.0.1:9 laddr=127.0.0.1:6379 fd=12 name= db=2 cmd=NULL\n" +
		"id=8 addr=127.0.0.1:10 laddr=127.0.0.1:6379 fd=13 name=lockcheck-admin db=2 cmd=info\n" +
		"garbage\n"
	got := earlierConns(list, 2, []int64{3})
	if len(got) != 1 || got[0] != 4 {
		t.Errorf("earlierConns on db 2 = %v, want [4] (not 3, ours; not 5, db 12; not 7, no command sent; not 8, the conductor's)", got)
	}
}

// TestPgSetupEndsAnEarlierRunsLock: a session of an earlier run that
// still holds advisory lock 42 (a pooled backend keeps a session-level
// lock until its pooler closes it) is waited for while it ends on its own
// and ended after drainBound when it does not; after pgSetup the run's
// first try takes the lock. Without pgDrain the try is refused.
func TestPgSetupEndsAnEarlierRunsLock(t *testing.T) {
	pg := needPostgres(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		after time.Duration // the earlier session ends this long after the setup began (0: never)
	}{
		{"ends on its own", 300 * time.Millisecond},
		{"never ends", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, err := pgx.Connect(ctx, pgURL(pg.Addr(), "earlier"))
			if err != nil {
				t.Fatal(err)
			}
			defer old.Close(ctx)
			if _, err := old.Exec(ctx, "SELECT pg_advisory_lock(42)"); err != nil {
				t.Fatal(err)
			}
			admin, err := pgx.Connect(ctx, pgURL(pg.Addr(), "observer"))
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close(ctx)
			began := time.Now()
			if tc.after > 0 {
				time.AfterFunc(tc.after, func() { old.Close(ctx) })
			}
			if err := pgSetup(ctx, admin); err != nil {
				t.Fatal(err)
			}
			took := time.Since(began)
			if want := cmp.Or(tc.after, drainBound); took < want {
				t.Errorf("pgSetup took %v, before the earlier session ended (%v)", took, want)
			}
			next, err := pgx.Connect(ctx, pgURL(pg.Addr(), "A"))
			if err != nil {
				t.Fatal(err)
			}
			defer next.Close(ctx)
			var won bool
			if err := next.QueryRow(ctx, "SELECT pg_try_advisory_lock(42)").Scan(&won); err != nil {
				t.Fatal(err)
			}
			if !won {
				t.Fatal("the run's first pg_try_advisory_lock(42) after pgSetup is refused: the earlier run's session still holds it")
			}
			if _, err := next.Exec(ctx, "SELECT pg_advisory_unlock_all()"); err != nil {
				t.Fatal(err)
			}
		})
	}
}
