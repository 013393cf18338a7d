package reality

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"lockcheck/model"
)

// pgAdvisoryUser is a user's client of a session-level PostgreSQL
// advisory lock, as a pgx user writes it: pg_try_advisory_lock(42) and
// pg_advisory_unlock(42) on a session of its own. A release on a session
// the server has ended reports that nothing was released (pgx closes the
// connection on the server's FATAL). ignoreUnlock is a planted bug: the
// release reports true whatever the server said.
type pgAdvisoryUser struct {
	c            *pgx.Conn
	ignoreUnlock bool
}

func (u *pgAdvisoryUser) Acquire(ctx context.Context) (bool, string, error) {
	var won bool
	err := u.c.QueryRow(ctx, "SELECT pg_try_advisory_lock(42)").Scan(&won)
	return won, "", err
}

func (u *pgAdvisoryUser) Release(ctx context.Context) (bool, string, error) {
	var ok bool
	err := u.c.QueryRow(ctx, "SELECT pg_advisory_unlock(42)").Scan(&ok)
	switch {
	case u.ignoreUnlock:
		return true, "", nil
	case err != nil && u.c.IsClosed(): // the server ended the session, and its lock
		return false, "session ended: " + err.Error(), nil
	}
	return ok, "", err
}

func (u *pgAdvisoryUser) Extend(context.Context) (bool, string, error) {
	return false, "", errNoExtend
}

func (u *pgAdvisoryUser) Validity(context.Context) (left time.Duration, told string, err error) {
	return 0, "", errNoExtend
}

func (u *pgAdvisoryUser) Close() { u.c.Close(context.Background()) }

var errNoExtend = errors.New("an advisory lock has no TTL to extend")

func pgAdvisoryMaker(ignoreUnlock bool) UserMaker {
	return func(ctx context.Context, t UserTarget) (UserLock, error) {
		c, err := pgx.Connect(ctx, t.DSN)
		if err != nil {
			return nil, err
		}
		return &pgAdvisoryUser{c: c, ignoreUnlock: ignoreUnlock}, nil
	}
}

// TestAdvisoryUserClient plays the session-level advisory lock's pause
// (the server ends the paused holder's idle session, B takes the lock, A's
// write loses B's update) with a user's pgx client on the lock session it
// is given: it agrees with the model step by step. A planted client whose
// release reports true on the ended session is caught at A's release.
func TestAdvisoryUserClient(t *testing.T) {
	in := fileInput(t, "../model/scenarios/advisory-session-pause.txt")
	if err := CheckClient(ClientUser, &in.Design); err != nil {
		t.Fatal(err)
	}
	opts := Options{Client: ClientUser, User: pgAdvisoryMaker(false), Postgres: needPostgres(t).Addr()}
	c := reproduce(t, in, opts)
	if !c.Agree || !c.Real.LostUpdate {
		t.Fatalf("a correct pgx client must agree with the model and lose B's update:\n%s", c.Text())
	}
	opts.User = pgAdvisoryMaker(true)
	c = reproduce(t, in, opts)
	if c.Agree || len(c.Differences) == 0 || !strings.Contains(c.Differences[0], "A release") {
		t.Fatalf("a release that reports true on an ended session: want a difference at A's release, got %q\n%s", c.Differences, c.Text())
	}
	t.Logf("planted: %s", c.Differences[0])
}

// pgXactUser is a user's client of a transaction-level advisory lock, as
// a pgx user writes it: Acquire begins a transaction and tries
// pg_try_advisory_xact_lock(42) in it (rolled back when refused), the
// job's read and write run in that transaction, and Release commits it.
// A statement that fails (the server killed the session idle in its
// transaction) fails the job's read or write; a session found closed is
// replaced at the next Acquire. retryWrite is a planted bug: a write that
// fails in the transaction is sent again on a new connection, outside any
// lock, and lands after the lock's transaction has ended.
type pgXactUser struct {
	dsn        string
	c          *pgx.Conn
	tx         pgx.Tx
	retryWrite bool
}

func (u *pgXactUser) Acquire(ctx context.Context) (bool, string, error) {
	if u.c.IsClosed() {
		c, err := pgx.Connect(ctx, u.dsn)
		if err != nil {
			return false, "", err
		}
		u.c = c
	}
	tx, err := u.c.Begin(ctx)
	if err != nil {
		return false, "", err
	}
	var won bool
	if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock(42)").Scan(&won); err != nil {
		return false, "", err
	}
	if !won {
		return false, "", tx.Rollback(ctx)
	}
	u.tx = tx
	return true, "", nil
}

func (u *pgXactUser) Query(ctx context.Context, sql string) (int64, bool, string, error) {
	var v int64
	if err := u.tx.QueryRow(ctx, sql).Scan(&v); err != nil {
		return 0, false, err.Error(), nil
	}
	return v, true, "", nil
}

func (u *pgXactUser) Exec(ctx context.Context, sql string, arg int64) (bool, string, error) {
	_, err := u.tx.Exec(ctx, sql, arg)
	if err != nil && u.retryWrite {
		c, cerr := pgx.Connect(ctx, u.dsn)
		if cerr != nil {
			return false, "", cerr
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, sql, arg)
		return err == nil, "sent again on a new connection", err
	}
	if err != nil {
		return false, err.Error(), nil
	}
	return true, "", nil
}

func (u *pgXactUser) Release(ctx context.Context) (bool, string, error) {
	tx := u.tx
	u.tx = nil
	if err := tx.Commit(ctx); err != nil {
		return false, err.Error(), nil // rolled back: the lock went with it
	}
	return true, "", nil
}

func (u *pgXactUser) Extend(context.Context) (bool, string, error) { return false, "", errNoExtend }

func (u *pgXactUser) Validity(context.Context) (time.Duration, string, error) {
	return 0, "", errNoExtend
}

func (u *pgXactUser) Close() { u.c.Close(context.Background()) }

func pgXactMaker(retryWrite bool) UserMaker {
	return func(ctx context.Context, t UserTarget) (UserLock, error) {
		c, err := pgx.Connect(ctx, t.DSN)
		if err != nil {
			return nil, err
		}
		return &pgXactUser{dsn: t.DSN, c: c, retryWrite: retryWrite}, nil
	}
}

// TestAdvisoryUserXact plays the transaction-level stories with a user's
// pgx client whose job writes in its own transaction: the pause that
// outlives idle_in_transaction_session_timeout (the write fails with the
// killed session: nothing lost), and the same lock through PgBouncer in
// transaction pooling mode (the pool changes nothing). Both agree with
// the model step by step. A planted client that sends a failed write
// again on a new connection is caught at A's write: it lands after the
// lock's transaction ended (where the model's is refused).
func TestAdvisoryUserXact(t *testing.T) {
	pg := needPostgres(t).Addr()
	for _, file := range []string{"../model/scenarios/advisory-xact-pause.txt", "../model/scenarios/advisory-pool-xact.txt"} {
		in := fileInput(t, file)
		if err := CheckClient(ClientUser, &in.Design); err != nil {
			t.Fatal(err)
		}
		if in.Design.Pool != model.PoolNone {
			needPgBouncer(t)
		}
		c := reproduce(t, in, Options{Client: ClientUser, User: pgXactMaker(false), Postgres: pg})
		if !c.Agree || c.Real.LostUpdate {
			t.Fatalf("%s: a correct pgx client must agree with the model and lose nothing:\n%s", file, c.Text())
		}
	}
	in := fileInput(t, "../model/scenarios/advisory-xact-pause.txt")
	c := reproduce(t, in, Options{Client: ClientUser, User: pgXactMaker(true), Postgres: pg})
	if c.Agree || len(c.Differences) == 0 || !strings.Contains(c.Differences[0], "A write") || !strings.Contains(c.Differences[0], "real write 1 → accepted") {
		t.Fatalf("a write sent again outside the transaction: want a difference at A's write, accepted, got %q\n%s", c.Differences, c.Text())
	}
	t.Logf("planted: %s", c.Differences[0])
}

// TestAdvisoryUserPooled plays the session-level lock through PgBouncer
// in transaction pooling mode with the user's pgx client of
// TestAdvisoryUserClient on the DSN it is given: C's try re-enters the
// pooled backend that holds A's lock, A's unlock lands on the other
// backend and returns false, and the backend keeps the lock for ever;
// every step and holder is the model's. A planted client whose release
// reports true whatever the server said is caught at A's release.
func TestAdvisoryUserPooled(t *testing.T) {
	needPgBouncer(t)
	in := fileInput(t, "../model/scenarios/advisory-pool-reentry.txt")
	if err := CheckClient(ClientUser, &in.Design); err != nil {
		t.Fatal(err)
	}
	opts := Options{Client: ClientUser, User: pgAdvisoryMaker(false), Postgres: needPostgres(t).Addr()}
	c := reproduce(t, in, opts)
	if !c.Agree || !c.Real.LostUpdate {
		t.Fatalf("a correct pgx client through the pool must agree with the model and lose A's update:\n%s", c.Text())
	}
	opts.User = pgAdvisoryMaker(true)
	c = reproduce(t, in, opts)
	if c.Agree || len(c.Differences) == 0 || !strings.Contains(c.Differences[0], "A release") {
		t.Fatalf("a release that ignores the unlock's false: want a difference at A's release, got %q\n%s", c.Differences, c.Text())
	}
	t.Logf("planted: %s", c.Differences[0])
}

// TestAdvisoryUserRefusals: what a user's client does not play on
// PostgreSQL is refused in one line.
func TestAdvisoryUserRefusals(t *testing.T) {
	for design, want := range map[string]string{
		"advisory/cad/none/plain,pool=tx-reset": "pool=tx-reset is played with lockcheck's own client only",
		"advisory/cad/none/plain,end=keepalive": "want end=idle",
	} {
		d, err := model.ParseDesign(design)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckClient(ClientUser, &d)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: want a one-line refusal saying %q, got %v", design, want, err)
		}
	}
}
