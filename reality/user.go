package reality

import (
	"context"
	"fmt"
	"time"

	"lockcheck/model"
)

// ClientUser is a lock client of the caller's own (Options.User), played
// as the libraries are: its acquire, extend and release are the caller's
// code; the job around them (read, work, write, and a fence INCR where the
// design takes a token) is the run's. Package locktest is its public face.
const ClientUser = "user"

// UserLock is one instance of a caller's lock client. Each call reports
// what happened and told: what the client said, in its own words.
type UserLock interface {
	// Acquire tries once to take the lock.
	Acquire(ctx context.Context) (won bool, told string, err error)
	// Release gives it back: released reports whether the client's lock
	// was still there to delete.
	Release(ctx context.Context) (released bool, told string, err error)
	// Extend extends (refreshes) the lock's TTL; a client without one
	// returns an error.
	Extend(ctx context.Context) (extended bool, told string, err error)
	// Validity is what the client's own clock says is left of its lock
	// (check=validity: the job gives up when nothing is); a client that
	// does not measure it returns an error.
	Validity(ctx context.Context) (left time.Duration, told string, err error)
	Close()
}

// UserOwner is a UserLock whose library writes a lock value of its own
// choosing (rueidislock: a random one on each try) instead of
// UserTarget.Value: Owns reports whether v is a value this client wrote,
// so that the observer can tell whose key it sees. It is called from the
// observer's goroutine while the client's calls run.
type UserOwner interface {
	Owns(v string) bool
}

// UserTx is a UserLock whose lock lives in a transaction (a PostgreSQL
// transaction-level advisory lock, level=xact): its Acquire began the
// transaction and took the lock in it, the job's read and write run in
// it through Query and Exec, and its Release is the COMMIT (released:
// it committed). ok false is the statement failing in the transaction
// (its session was killed): the job's read or write is refused, as the
// model's is; err is the call itself failing, which ends the run.
type UserTx interface {
	// Query runs the job's read, sql, a query of one integer.
	Query(ctx context.Context, sql string) (v int64, ok bool, told string, err error)
	// Exec runs the job's write, sql with its one argument arg.
	Exec(ctx context.Context, sql string, arg int64) (ok bool, told string, err error)
}

// UserTarget is where client i's lock lives and what it must write: the
// Redis at Addr (the client's own proxy, which a pause holds), database DB,
// the key Key holding Value (so that the observer knows whose key it is),
// with a TTL of TTL, and the Drift its validity allows for.
type UserTarget struct {
	Client int
	Addr   string
	DB     int
	Key    string
	Value  string
	TTL    time.Duration
	// Drift is the clock drift the client subtracts from what is left
	// (check=validity): the design's drift ticks.
	Drift time.Duration
	// Addrs, on Redlock (lock=redlock), is one address per node, in the
	// nodes' order: the client's own proxy to node k (Addr is Addrs[0]),
	// each with the database DB and the key Key holding Value.
	Addrs []string
	// DSN, on PostgreSQL (lock=advisory), is the connection string of the
	// client's lock session: through its proxy (Addr), with the client's
	// letter as application_name (the observer names the holder by it).
	// Without the pool it sets the server's timeout of TTL at the
	// startup (idle_session_timeout; level=xact: idle_in_transaction_
	// session_timeout); with pool=tx it reaches the server through
	// PgBouncer (transaction pooling), in the simple query protocol
	// (default_query_exec_mode=simple_protocol: the pool keeps no
	// prepared statement from one transaction to the next).
	DSN string
}

// UserMaker makes client i's lock.
type UserMaker func(ctx context.Context, t UserTarget) (UserLock, error)

// userAPI is a UserLock as the client's job calls it. down, if set,
// reports whether the lock's server is down (a node-crash step killed
// it, and it is not back yet): an error of a call then is the down
// node's answer, as the model's (an acquire refused, nothing released or
// renewed), not a failure of the run.
type userAPI struct {
	u    UserLock
	down func() bool
}

// failed is a call's error: a downError while the lock's server is down.
func (a userAPI) failed(call string, err error) error {
	err = fmt.Errorf("your lock's %s: %w", call, err)
	if a.down != nil && a.down() {
		return &downError{err}
	}
	return err
}

func (a userAPI) acquire(ctx context.Context) (bool, int, string, error) {
	won, told, err := a.u.Acquire(ctx)
	if err != nil {
		return false, 0, told, a.failed("Acquire", err)
	}
	return won, 0, told, nil
}

func (a userAPI) release(ctx context.Context, _, _ int) (bool, string, error) {
	ok, told, err := a.u.Release(ctx)
	if err != nil {
		return false, told, a.failed("Release", err)
	}
	return ok, told, nil
}

func (a userAPI) renew(ctx context.Context) (bool, string, error) {
	ok, told, err := a.u.Extend(ctx)
	if err != nil {
		return false, told, a.failed("Extend", err)
	}
	return ok, told, nil
}

func (a userAPI) close() { a.u.Close() }

// validity is the user's Validity: what is left of the lock by the
// client's own clock.
func (a userAPI) validity(ctx context.Context) (time.Duration, string, error) {
	left, told, err := a.u.Validity(ctx)
	if err != nil {
		return 0, "", fmt.Errorf("your lock's Validity: %v", err)
	}
	return left, told, nil
}

// userCrashed is a user's client dying: a dead process sends nothing, so
// its traffic is held for good and whatever the client runs by itself (a
// keep-alive, a refresh loop) reaches no server. A write already on its
// way (delay) still arrives, as in the model: its storage proxy stays open,
// and only the lock's traffic is held (the lock has a proxy of its own,
// lockProxyKey), so that a library's own renewals die with the process
// there too.
func userCrashed(c *client) {
	switch {
	case c.net == nil:
	case c.m.Phase == model.PhaseArrive:
		c.net.holdLock()
	default:
		c.net.hold()
	}
}
