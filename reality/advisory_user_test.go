package reality

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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
