package locktest_test

import (
	"context"
	"errors"
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

// pgTxLock is an adapter for a PostgreSQL transaction-level advisory lock
// taken with pgx (Config.Advisory Transaction): Acquire begins a
// transaction and tries pg_try_advisory_xact_lock in it, the job's read
// and write run in that transaction (Query, Exec), and Release commits
// it. The server kills a session idle in its transaction for
// idle_in_transaction_session_timeout, which rolls it back and frees the
// lock; the next Acquire opens a new session.
type pgTxLock struct {
	c   *pgx.Conn
	tx  pgx.Tx
	dsn string
	bug string // a planted mistake (TestPlantedPostgresTxClient); "" for none
}

func (l *pgTxLock) Acquire(ctx context.Context) (bool, error) {
	if l.c.IsClosed() { // its session was killed: a new one
		c, err := pgx.Connect(ctx, l.dsn)
		if err != nil {
			return false, err
		}
		l.c = c
	}
	tx, err := l.c.Begin(ctx)
	if err != nil {
		return false, err
	}
	var won bool
	if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock(42)").Scan(&won); err != nil || !won {
		return false, errors.Join(err, tx.Rollback(ctx))
	}
	l.tx = tx
	return true, nil
}

func (l *pgTxLock) Query(ctx context.Context, sql string) (v int64, err error) {
	err = l.tx.QueryRow(ctx, sql).Scan(&v)
	if err != nil && l.bug == "retried-outside" {
		err = l.outside(ctx, func(c *pgx.Conn) error { return c.QueryRow(ctx, sql).Scan(&v) })
	}
	return v, err
}

func (l *pgTxLock) Exec(ctx context.Context, sql string, arg int64) error {
	_, err := l.tx.Exec(ctx, sql, arg)
	if err != nil && l.bug == "retried-outside" {
		err = l.outside(ctx, func(c *pgx.Conn) error { _, err := c.Exec(ctx, sql, arg); return err })
	}
	return err
}

// outside is the planted mistake: a statement that failed in the lock's
// transaction is sent again on a session of its own, outside any lock.
func (l *pgTxLock) outside(ctx context.Context, f func(*pgx.Conn) error) error {
	c, err := pgx.Connect(ctx, l.dsn)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	return f(c)
}

func (l *pgTxLock) Release(ctx context.Context) (bool, error) {
	tx := l.tx
	l.tx = nil
	if err := tx.Commit(ctx); err != nil { // rolled back (its session was killed): the lock went with it
		return false, nil
	}
	return true, nil
}

func (l *pgTxLock) Close() error { return l.c.Close(context.Background()) }

func newPgTxLock(bug string) func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
	return func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
		c, err := pgx.Connect(ctx, t.DSN)
		if err != nil {
			return nil, err
		}
		return &pgTxLock{c: c, dsn: t.DSN, bug: bug}, nil
	}
}

// TestMyPostgresTxLock plays the transaction-level advisory lock against
// the pgx client, straight to the server and through PgBouncer in
// transaction pooling mode: the job writes in the lock's transaction, so
// a pause that outlives idle_in_transaction_session_timeout rolls the
// write back (nothing is lost), and the client agrees with the model.
func TestMyPostgresTxLock(t *testing.T) {
	t.Parallel()
	for _, pooled := range []bool{false, true} {
		locktest.Run(t, locktest.Config{
			Service:   locktest.Postgres,
			Advisory:  locktest.Transaction,
			Pooled:    pooled,
			Clients:   2,
			Schedules: 4,
			New:       newPgTxLock(""),
		})
	}
}

// TestMyPooledPostgresLock plays the session-level lock through
// PgBouncer in transaction pooling mode with the pgx client of
// TestMyPostgresLock, which reports what pg_advisory_unlock returned: it
// agrees with the model, whose pool hands a client's unlock to the other
// backend (false) and a second client's try to the holding one (a
// re-entry).
func TestMyPooledPostgresLock(t *testing.T) {
	t.Parallel()
	locktest.Run(t, locktest.Config{Service: locktest.Postgres, Pooled: true, Clients: 2, Schedules: 4, New: newPgLock("")})
}

// TestPlantedPostgresClients: planted mistakes of a pooled session-level
// client and a transaction-level one are caught, each first on the
// shortest schedule that shows it.
func TestPlantedPostgresClients(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		cfg   locktest.Config
		first string // the first schedule reported
		want  string // the difference it names
	}{
		// through the pool A's unlock lands on the other backend and
		// returns false; the client says it released
		{"pooled unlock-result-ignored", locktest.Config{Pooled: true, New: newPgLock("unlock-result-ignored")},
			"schedule no-lost-update ", "reply: model pg_advisory_unlock → false or error, real pg_advisory_unlock → true"},
		// A pauses past idle_in_transaction_session_timeout; its read
		// fails with the killed session and the client sends it again on
		// a session of its own, outside the lock (and then its write,
		// which lands after the lock's transaction has ended)
		{"retried-outside", locktest.Config{Advisory: locktest.Transaction, New: newPgTxLock("retried-outside")},
			"schedule exclusive ", "A read): reply: model read → rejected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Service, cfg.Clients, cfg.Schedules = locktest.Postgres, 2, 2
			r := &recorder{TB: t}
			locktest.Run(r, cfg)
			if len(r.errs) == 0 {
				t.Fatalf("planted %s: no schedule parts from the model", tc.name)
			}
			first := r.errs[0]
			if !strings.Contains(first, tc.first) || !strings.Contains(first, tc.want) || !strings.Contains(first, "replay: LOCKTEST_SEED=") {
				t.Fatalf("planted %s: want the first report on %q naming %q with a replay line, got:\n%s", tc.name, tc.first, tc.want, first)
			}
			t.Logf("planted %s: %d schedules part from the model; the first:\n%s", tc.name, len(r.errs), first)
		})
	}
}
