package reality

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestPostgresNeedsThePassword: the test's PostgreSQL lets no one in
// without the run's password, over TCP or over its Unix socket (another
// local user could otherwise connect while the tests run); with it, the
// run connects.
func TestPostgresNeedsThePassword(t *testing.T) {
	pg := needPostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, url := range []string{
		"postgres://postgres@" + pg.Addr() + "/postgres?sslmode=disable",
		"postgres://postgres:wrong@" + pg.Addr() + "/postgres?sslmode=disable",
		"postgres://postgres@/postgres?host=" + pg.dir + "&port=" + strings.TrimPrefix(pg.Addr(), "127.0.0.1:"),
	} {
		c, err := pgx.Connect(ctx, url)
		if err == nil {
			c.Close(ctx)
			t.Fatalf("%s: connected without the password", url)
		}
		require.Regexp(t, `password|SASL`, err.Error(), url)
	}
	c, err := pgx.Connect(ctx, pg.URL("auth-test"))
	require.NoError(t, err)
	c.Close(ctx)
}

// TestPgStartError: a postgres that exits at start is reported by the
// line that says why (its port taken, say), not its last line.
func TestPgStartError(t *testing.T) {
	out := "2026-12-07 LOG:  starting PostgreSQL 15\n2026-12-07 LOG:  could not bind IPv4 address \"127.0.0.1\": Address already in use\n2026-12-07 LOG:  database system is shut down\n"
	if got := pgStartError(out); !strings.Contains(got, "Address already in use") {
		t.Errorf("pgStartError: %q, want the bind failure", got)
	}
	if got := pgStartError("a\nlast"); got != "last" {
		t.Errorf("pgStartError without a cause: %q, want the last line", got)
	}
}
