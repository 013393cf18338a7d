package locktest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"lockcheck/locktest"
)

// pgLock is an adapter for a PostgreSQL session-level advisory lock
// taken with pgx: pg_try_advisory_lock on a session of its own, opened
// with the target's DSN. The server ends a session idle for
// idle_session_timeout, a waiter's too: the next try opens a new one.
type pgLock struct {
	c   *pgx.Conn
	dsn string
	bug string // a planted mistake (TestPlantedPostgresClient); "" for none
}

func (l *pgLock) Acquire(ctx context.Context) (bool, error) {
	var won bool
	err := l.c.QueryRow(ctx, "SELECT pg_try_advisory_lock(42)").Scan(&won)
	if err != nil && l.c.IsClosed() { // its session was ended: try on a new one
		if l.c, err = pgx.Connect(ctx, l.dsn); err != nil {
			return false, err
		}
		err = l.c.QueryRow(ctx, "SELECT pg_try_advisory_lock(42)").Scan(&won)
	}
	return won, err
}

func (l *pgLock) Release(ctx context.Context) (bool, error) {
	var ok bool
	err := l.c.QueryRow(ctx, "SELECT pg_advisory_unlock(42)").Scan(&ok)
	if l.bug == "unlock-result-ignored" { // never looks at what the server said
		return true, nil
	}
	if err != nil && l.c.IsClosed() { // the server ended the session, and its lock with it
		return false, nil
	}
	return ok, err
}

func (l *pgLock) Close() error { return l.c.Close(context.Background()) }

func newPgLock(bug string) func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
	return func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
		c, err := pgx.Connect(ctx, t.DSN) // connected before the clock starts
		if err != nil {
			return nil, err
		}
		return &pgLock{c: c, dsn: t.DSN, bug: bug}, nil
	}
}

// TestMyPostgresLock plays the model's session-level advisory lock
// against two instances of the pgx client: locktest starts a PostgreSQL
// server per schedule played at once. The model's own lock loses an
// update when a pause outlives idle_session_timeout (no fencing), so a
// correct client agrees with it there too: nothing parts from the model.
func TestMyPostgresLock(t *testing.T) {
	t.Parallel() // mostly sleep: alongside the Redis tests
	locktest.Run(t, locktest.Config{
		Service:   locktest.Postgres,
		Clients:   2,
		Schedules: 4,
		New:       newPgLock(""),
	})
}

// TestPlantedPostgresClient: a client whose release reports true whatever
// the server said is caught, first on the shortest schedule that ends a
// paused holder's session before its release.
func TestPlantedPostgresClient(t *testing.T) {
	t.Parallel()
	r := &recorder{TB: t}
	locktest.Run(r, locktest.Config{Service: locktest.Postgres, Clients: 2, Schedules: 2, New: newPgLock("unlock-result-ignored")})
	if len(r.errs) == 0 {
		t.Fatal("planted unlock-result-ignored on PostgreSQL: no schedule parts from the model")
	}
	first := r.errs[0]
	if !strings.Contains(first, "release") || !strings.Contains(first, "replay: LOCKTEST_SEED=") {
		t.Fatalf("planted unlock-result-ignored: want the first report at a release, with a replay line, got:\n%s", first)
	}
	t.Logf("%d schedules part from the model; the first:\n%s", len(r.errs), first)
}
