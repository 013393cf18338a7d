package locktest

import (
	"context"
	"fmt"
)

// advisory.go: what a PostgreSQL advisory-lock client (Service Postgres)
// adds to the Lock: which lock it takes (Config.Advisory), and for a
// transaction-level one the transaction the job's read and write run in.

// Tx is a Lock whose lock lives in a transaction (Config.Advisory
// Transaction): Acquire begins a transaction and takes the lock in it
// (BEGIN; SELECT pg_try_advisory_xact_lock(42); ROLLBACK if refused),
// the job's read and write run in that transaction through Query and
// Exec, and Release commits it, which applies the write and frees the
// lock, and reports false when the transaction could not commit (the
// server killed its session). An error from Query or Exec is the
// statement failing in the transaction: the job's read or write fails,
// as the model's does once the server has killed the session; the
// report shows the error's words. With pgx, Query is
// tx.QueryRow(ctx, sql).Scan(&v) and Exec is tx.Exec(ctx, sql, arg).
type Tx interface {
	// Query runs the job's read, sql: a query of one integer.
	Query(ctx context.Context, sql string) (v int64, err error)
	// Exec runs the job's write, sql, with its one argument arg.
	Exec(ctx context.Context, sql string, arg int64) error
}

// Advisory is the PostgreSQL advisory lock your client takes (Service
// Postgres).
type Advisory int

const (
	// Session: pg_try_advisory_lock(42), held by the session until
	// pg_advisory_unlock(42); the job reads and writes on a connection of
	// Run's own, so the lock's session sits idle (the model's
	// level=session).
	Session Advisory = iota
	// Transaction: pg_try_advisory_xact_lock(42) in a transaction of your
	// client's (the Lock is a Tx), the job's read and write in it, freed
	// by the COMMIT; the server kills a session idle in its transaction
	// for Target.TTL, which rolls the write back (level=xact).
	Transaction
)

// Query and Exec are the Lock's (a Tx): a statement's error is the
// job's read or write failing (ok false), told in the report.
func (a *adapter) Query(ctx context.Context, sql string) (v int64, ok bool, told string, err error) {
	var got struct {
		v   int64
		err error
	}
	if _, err = guarded(ctx, "Query", a.timeout, func(ctx context.Context) (bool, error) {
		got.v, got.err = a.l.(Tx).Query(ctx, sql)
		return false, nil
	}); err != nil {
		return 0, false, "", err
	}
	if got.err != nil {
		return 0, false, "Query → " + got.err.Error(), nil
	}
	return got.v, true, fmt.Sprintf("Query → %d", got.v), nil
}

func (a *adapter) Exec(ctx context.Context, sql string, arg int64) (ok bool, told string, err error) {
	var failed error
	if _, err = guarded(ctx, "Exec", a.timeout, func(ctx context.Context) (bool, error) {
		failed = a.l.(Tx).Exec(ctx, sql, arg)
		return false, nil
	}); err != nil {
		return false, "", err
	}
	if failed != nil {
		return false, "Exec → " + failed.Error(), nil
	}
	return true, "Exec → nil", nil
}
