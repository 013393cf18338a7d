package reality

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"lockcheck/model"
)

// needPgBouncer skips the test without Debian's pgbouncer, or fails it
// when CI=true: the pooled advisory-lock designs must be played in CI.
func needPgBouncer(t *testing.T) {
	t.Helper()
	if _, err := FindPgBouncer(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but %v: the real-server tests must run in CI", err)
		}
		t.Skipf("skipped: %v", err)
	}
}

// TestAdvisoryLocks plays the advisory-lock stories on the tests' real
// PostgreSQL 15, the pooled ones through a PgBouncer 1.18 of each run's
// own in transaction pooling mode: the idle session ended by the server
// (session level: the paused write lands, an update is lost), the
// transaction killed with its write (xact: nothing lost), a re-entry of a
// pooled backend's lock and an unlock on the other backend (pool=tx), the
// lock gone with DISCARD ALL (pool=tx-reset), the transaction-level lock
// through the pool, and a session that outlives a pause when only TCP
// keepalive ends sessions (end=keepalive). Every step, every holder and the outcome must be
// the model's.
func TestAdvisoryLocks(t *testing.T) {
	for _, tc := range []struct {
		file    string
		lost    bool
		expired bool // the server ended a holder's session
	}{
		{"../model/scenarios/advisory-session-pause.txt", true, true},
		{"../model/scenarios/advisory-xact-pause.txt", false, true},
		{"../model/scenarios/advisory-pool-reentry.txt", true, false},
		{"../model/scenarios/advisory-pool-reset.txt", true, false},
		{"../model/scenarios/advisory-pool-xact.txt", false, false},
		{"testdata/advisory-keepalive-pause.txt", false, false}, // end=keepalive: the session outlives the pause
	} {
		t.Run(tc.file, func(t *testing.T) {
			in := fileInput(t, tc.file)
			if in.Design.Pool != model.PoolNone {
				needPgBouncer(t)
			}
			c := reproduce(t, in, Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			if c.Real.LostUpdate != tc.lost || (len(c.Real.Expired) > 0) != tc.expired {
				t.Fatalf("want lost update %v and a session ended %v:\n%s", tc.lost, tc.expired, c.Text())
			}
		})
	}
}

// TestPgBouncerTakesTurns: the pool the model assumes, two backends that
// take statements in turn, is the PgBouncer the tests start.
func TestPgBouncerTakesTurns(t *testing.T) {
	needPgBouncer(t)
	pg := needPostgres(t)
	ctx := context.Background()
	b, err := StartPgBouncer(ctx, pg.Addr(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	c, err := pgx.Connect(ctx, bouncerURL(b.Addr(), "turns"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var pids []int
	for k := 0; k < 6; k++ {
		var pid int
		if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	for k := range pids {
		if pids[k] != pids[k%2] || pids[0] == pids[1] {
			t.Fatalf("backends of six statements %v: want two backends in turn", pids)
		}
	}
}
