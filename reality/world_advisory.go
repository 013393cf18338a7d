package reality

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"lockcheck/model"
)

// advisoryWorld is a PostgreSQL advisory lock (lock=advisory) on the
// run's PostgreSQL, the counter in its orders(42) row as for the row lock
// (pgWorld). Each client's lock session goes through its proxy to the
// server, or, with pool=tx|tx-reset, to a PgBouncer of the run's own
// (pgbouncer.go) that hands its statements to two pooled backends.
//
// level=session: SELECT pg_try_advisory_lock(42), pg_backend_pid() on the
// lock session, its pg_advisory_unlock(42) at the release; the job reads
// and writes the counter on a second connection, straight to the server
// (autocommit). Without the pool the lock session sets
// idle_session_timeout to the TTL less half a tick: the server ends a
// holder's session idle that long, and its lock with it, when the model
// says.
//
// level=xact: BEGIN; SET LOCAL idle_in_transaction_session_timeout (the
// TTL less half a tick); SELECT pg_try_advisory_xact_lock(42), and
// ROLLBACK if refused: the model's blocked pg_advisory_xact_lock is played
// as a try at each of the schedule's acquire steps, as the row lock's
// FOR UPDATE NOWAIT is. The read and the write run in the transaction and
// COMMIT applies the write and releases the lock.
//
// The observer reads pg_locks: the backend that holds advisory lock 42.
// Without the pool, or with level=xact, its application name is the
// client's letter. Under pool=tx a pooled backend holds the lock for
// whichever clients were granted it there: each client tells the
// observer the backend of its grant (pg_backend_pid, in the statement
// that took the lock), and the holder is named as the model names it
// (lock_advisory.go, settleOwner): the holder so far while its grant
// stands, else the first client with a grant standing on that backend,
// else, with none, whoever it was.
type advisoryWorld struct {
	pgWorld
	bouncer  *PgBouncer // pool=tx|tx-reset
	lockAddr string     // where lock sessions connect: the server, or PgBouncer
	grants   *advisoryGrants
	aobs     *advisoryObserver
	// xactTimeout: the run set idle_in_transaction_session_timeout
	// server-wide (setXactTimeout), and stop resets it
	xactTimeout bool
}

// advisoryGrants is the backend pid of each client's standing grant (0
// none), as the clients learn them, for the observer.
type advisoryGrants struct {
	mu  sync.Mutex
	pid []int
}

func (g *advisoryGrants) set(i, pid int) {
	g.mu.Lock()
	g.pid[i] = pid
	g.mu.Unlock()
}

func (g *advisoryGrants) get() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.pid...)
}

func (w *advisoryWorld) start(ctx context.Context) error {
	if err := w.pgWorld.start(ctx); err != nil {
		return err
	}
	w.lockAddr = w.addr
	if w.d.Pool != model.PoolNone {
		b, err := StartPgBouncer(ctx, w.addr, w.d.Pool == model.PoolTxReset)
		if err != nil {
			return err
		}
		w.bouncer, w.lockAddr = b, b.Addr()
		if w.opts.Client == ClientUser && w.d.Level == model.LevelXact {
			if err := w.setXactTimeout(ctx); err != nil {
				return err
			}
		}
	}
	w.grants = &advisoryGrants{pid: make([]int, w.d.Clients)}
	w.aobs = &advisoryObserver{c: w.pgc, clients: w.d.Clients, grants: w.grants,
		byGrant: w.d.Level == model.LevelSession && w.d.Pool != model.PoolNone, named: HolderNone,
		untimed: w.d.End == model.EndKeepalive}
	return nil
}

func (w *advisoryWorld) observer() looker { return w.aobs }

func (w *advisoryWorld) lock(ctx context.Context, i int, h *netHold) (realLock, error) {
	via, err := h.via(w.lockAddr)
	if err != nil {
		return nil, err
	}
	l := &advisoryLock{d: w.d, i: i, grants: w.grants, timeout: TTL(w.d.TTLTicks, w.opts.Tick), url: bouncerURL(via, model.ClientName(i))}
	if w.opts.Client == ClientUser {
		return w.userLock(ctx, l, i, via, h)
	}
	if w.d.Level == model.LevelSession {
		storeVia, err := h.via(w.addr)
		if err != nil {
			return nil, err
		}
		l.storeURL = pgURL(storeVia, model.ClientName(i)+"-store")
		if w.d.Pool == model.PoolTxReset {
			l.watchURL = pgURL(w.addr, model.ClientName(i)+"-watch") // not through the proxy: the pooler's step, not the client's
		}
	}
	if err := l.open(ctx); err != nil {
		return nil, fmt.Errorf("client %s: %v", model.ClientName(i), err)
	}
	return l, nil
}

// userLock is a user's client's advisory lock (package locktest): its
// lock session is the user's own, opened with the DSN it is given
// (through its proxy, named by application_name). Without the pool the
// DSN sets the server's timeout at the session's startup
// (idle_session_timeout, level=session; idle_in_transaction_session_
// timeout, level=xact); through PgBouncer, which passes no such
// startup parameter on, the run sets the xact timeout server-wide
// (start) and the session level has none. level=session: the job's
// counter connection is the run's, as for lockcheck's own client, and
// under pool=tx a connection of the run's, straight to the server, reads
// in pg_locks the backend of each won grant (the holder is named by
// grants). level=xact: the job's read and write go through the user's
// transaction (UserTx), and its Release is the COMMIT.
func (w *advisoryWorld) userLock(ctx context.Context, l *advisoryLock, i int, via string, h *netHold) (realLock, error) {
	if w.opts.User == nil {
		return nil, fmt.Errorf("client %s: Options.User is nil", ClientUser)
	}
	name := model.ClientName(i)
	if w.d.Level == model.LevelSession {
		storeVia, err := h.via(w.addr)
		if err != nil {
			return nil, err
		}
		l.storeURL = pgURL(storeVia, name+"-store")
		if l.store, err = pgx.Connect(ctx, l.storeURL); err != nil {
			return nil, fmt.Errorf("client %s: postgres counter connection: %v", name, err)
		}
		if w.d.Pool == model.PoolTx {
			if l.look, err = pgx.Connect(ctx, pgURL(w.addr, name+"-grants")); err != nil { // not through the proxy: the observer's look
				l.close()
				return nil, fmt.Errorf("client %s: postgres connection to read its grants: %v", name, err)
			}
		}
	}
	dsn := l.url
	if w.d.Pool == model.PoolNone {
		dsn = pgURL(via, name) + "&options=" + strings.ReplaceAll(url.QueryEscape(fmt.Sprintf("-c %s=%d", advisoryTimeout(w.d), l.timeout.Milliseconds())), "+", "%20")
	}
	u, err := w.opts.User(ctx, UserTarget{Client: i, Addr: via, Key: "42", Value: name, TTL: l.timeout, DSN: dsn})
	if err != nil {
		l.close()
		return nil, err
	}
	l.user = userAPI{u: u}
	if w.d.Level == model.LevelXact {
		tx, ok := u.(UserTx)
		if !ok {
			l.close()
			return nil, fmt.Errorf("client %s: a transaction-level advisory lock runs the job's read and write in the client's transaction, but %T has no Query and Exec (UserTx)", name, u)
		}
		l.tx = tx
	}
	return l, nil
}

// setXactTimeout sets idle_in_transaction_session_timeout server-wide
// (ALTER SYSTEM, then a reload, which an idle backend applies before its
// next statement): a user's transaction-level lock through PgBouncer,
// whose sessions cannot set it at their startup. stop resets it.
func (w *advisoryWorld) setXactTimeout(ctx context.Context) error {
	ms := TTL(w.d.TTLTicks, w.opts.Tick).Milliseconds()
	for _, q := range []string{fmt.Sprintf("ALTER SYSTEM SET idle_in_transaction_session_timeout = %d", ms), "SELECT pg_reload_conf()"} {
		if _, err := w.pgc.Exec(ctx, q); err != nil {
			return fmt.Errorf("postgres %s: %v", q, err)
		}
	}
	w.xactTimeout = true
	// a new session sees the reloaded value once the postmaster has
	// reloaded, and it signals the backends as it does
	for {
		c, err := pgx.Connect(ctx, pgURL(w.addr, "reload"))
		if err != nil {
			return fmt.Errorf("postgres: after the reload: %v", err)
		}
		var v string
		err = c.QueryRow(ctx, "SELECT current_setting('idle_in_transaction_session_timeout')").Scan(&v)
		c.Close(ctx)
		if err != nil {
			return fmt.Errorf("postgres: after the reload: %v", err)
		}
		if v == fmt.Sprintf("%dms", ms) || (ms%1000 == 0 && v == fmt.Sprintf("%ds", ms/1000)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres: idle_in_transaction_session_timeout is %s after the reload, want %dms: %v", v, ms, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (w *advisoryWorld) stop() {
	if w.xactTimeout {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = w.pgc.Exec(ctx, "ALTER SYSTEM RESET idle_in_transaction_session_timeout")
		_, _ = w.pgc.Exec(ctx, "SELECT pg_reload_conf()")
		cancel()
	}
	if w.bouncer != nil {
		w.bouncer.Stop()
	}
	w.pgWorld.stop()
}

// advisoryLock is one client's advisory lock session (and, level=session,
// its counter connection).
type advisoryLock struct {
	noUnlock
	d             *model.Design
	i             int
	grants        *advisoryGrants
	url, storeURL string
	watchURL      string // pool=tx-reset, level=session
	timeout       time.Duration
	c             *pgx.Conn // the lock session
	store         *pgx.Conn // level=session: the counter's connection
	watch         *pgx.Conn // pool=tx-reset, level=session: to the server, to see the pool's resets done
	buffered      int       // level=xact: the UPDATE's value, not yet committed (0: none)
	user          lockAPI   // a user's client (ClientUser): its own lock session, not c
	tx            UserTx    // a user's client, level=xact: the job's read and write in its transaction
	look          *pgx.Conn // a user's client, pool=tx, level=session: to the server, to read its grants' backend
}

// open connects. Under the pool it sends nothing: a statement would take
// the pool's turn.
func (l *advisoryLock) open(ctx context.Context) error {
	var err error
	if l.c, err = pgx.Connect(ctx, l.url); err != nil {
		return fmt.Errorf("postgres lock session: %v", err)
	}
	if err := l.setIdleTimeout(ctx); err != nil {
		return err
	}
	if l.storeURL != "" {
		if l.store, err = pgx.Connect(ctx, l.storeURL); err != nil {
			return fmt.Errorf("postgres counter connection: %v", err)
		}
	}
	if l.watchURL != "" {
		if l.watch, err = pgx.Connect(ctx, l.watchURL); err != nil {
			return fmt.Errorf("postgres connection to watch the pool: %v", err)
		}
	}
	return nil
}

// setIdleTimeout sets the lock session's idle_session_timeout
// (level=session, no pool, end=idle; end=keepalive: no idle timeout).
func (l *advisoryLock) setIdleTimeout(ctx context.Context) error {
	if l.d.Level == model.LevelSession && l.d.Pool == model.PoolNone && l.d.End == model.EndIdle {
		if _, err := l.c.Exec(ctx, fmt.Sprintf("SET idle_session_timeout = %d", l.timeout.Milliseconds())); err != nil {
			return fmt.Errorf("postgres: SET idle_session_timeout: %v", err)
		}
	}
	return nil
}

// resetDone waits until PgBouncer has reset backend pid after the
// client's statement (pool=tx-reset): DISCARD ALL is sent as the backend
// goes back to the pool, when the statement's answer is already on its
// way to the client, and it ends a few milliseconds later. The model
// counts the reset in the statement's step, so the step ends with it; a
// reset slower than the step's window makes the run void, as any late
// reply does.
func (l *advisoryLock) resetDone(ctx context.Context, pid int) error {
	for {
		var reset bool
		err := l.watch.QueryRow(ctx, "SELECT state = 'idle' AND query = 'DISCARD ALL' FROM pg_stat_activity WHERE pid = $1", pid).Scan(&reset)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("postgres: watching PgBouncer's reset of backend %d: %v", pid, err)
		}
		if reset || errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("PgBouncer did not reset backend %d: %v", pid, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}

func (l *advisoryLock) connect(context.Context) error { return nil } // connected when made

func (l *advisoryLock) close() {
	if l.user != nil {
		l.user.close()
	}
	for _, c := range []*pgx.Conn{l.c, l.store, l.watch, l.look} {
		if c != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			c.Close(ctx)
			cancel()
		}
	}
}

// ended reports whether err says that the server ended the lock session
// (an idle timeout: the connection is closed).
func (l *advisoryLock) ended(err error) bool {
	if l.c.IsClosed() {
		return true
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "57P05" || pe.Code == "25P03") // idle_session_timeout, idle_in_transaction_session_timeout
}

func (l *advisoryLock) incr(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("an advisory lock is played with fence=none: no INCR")
}

func (l *advisoryLock) expire(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("an advisory lock has no EXPIRE")
}

func (l *advisoryLock) renew(context.Context, *client, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("an advisory lock has no renewal")
}

func (l *advisoryLock) acquire(ctx context.Context, c *client, ob *Obs) (model.Reply, error) {
	if l.user != nil {
		won, _, told, err := l.user.acquire(ctx)
		if err != nil {
			return model.Reply{}, err
		}
		ob.Told = told
		if won && l.look != nil { // pool=tx: the grant is on the backend that holds the lock now
			pid, err := lockHolderPid(ctx, l.look)
			if err != nil {
				return model.Reply{}, err
			}
			l.grants.set(l.i, pid)
		}
		return wonReply(l.d, won, 0, ob), nil
	}
	if l.d.Level == model.LevelXact {
		return l.acquireXact(ctx, ob)
	}
	var won bool
	var pid int
	q := "SELECT pg_try_advisory_lock(42), pg_backend_pid()"
	err := l.c.QueryRow(ctx, q).Scan(&won, &pid)
	if err != nil && l.d.Pool == model.PoolNone && l.ended(err) {
		// the server ended its idle session (a waiter's too, or a holder's
		// whose lock went with it): the try goes on a new one
		l.c.Close(ctx)
		if l.c, err = pgx.Connect(ctx, l.url); err == nil {
			err = l.setIdleTimeout(ctx)
		}
		if err == nil {
			err = l.c.QueryRow(ctx, q).Scan(&won, &pid)
		}
	}
	if err != nil {
		return model.Reply{}, fmt.Errorf("postgres pg_try_advisory_lock: %v", err)
	}
	if won {
		l.grants.set(l.i, pid)
	}
	if l.watch != nil {
		if err := l.resetDone(ctx, pid); err != nil {
			return model.Reply{}, err
		}
	}
	return wonReply(l.d, won, 0, ob), nil
}

// acquireXact: BEGIN; SET LOCAL …; pg_try_advisory_xact_lock, ROLLBACK if
// refused. A session killed earlier is replaced by a new one.
func (l *advisoryLock) acquireXact(ctx context.Context, ob *Obs) (model.Reply, error) {
	if l.c.IsClosed() {
		if err := l.open(ctx); err != nil {
			return model.Reply{}, err
		}
	}
	for _, q := range []string{"BEGIN", fmt.Sprintf("SET LOCAL idle_in_transaction_session_timeout = %d", l.timeout.Milliseconds())} {
		if _, err := l.c.Exec(ctx, q); err != nil {
			return model.Reply{}, fmt.Errorf("postgres %s: %v", q, err)
		}
	}
	var won bool
	if err := l.c.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock(42)").Scan(&won); err != nil {
		return model.Reply{}, fmt.Errorf("postgres pg_try_advisory_xact_lock: %v", err)
	}
	if !won {
		if _, err := l.c.Exec(ctx, "ROLLBACK"); err != nil {
			return model.Reply{}, fmt.Errorf("postgres ROLLBACK: %v", err)
		}
	}
	return wonReply(l.d, won, 0, ob), nil
}

func (l *advisoryLock) read(ctx context.Context, c *client, tok int, ob *Obs) (model.Reply, error) {
	if l.tx != nil {
		v, ok, told, err := l.tx.Query(ctx, "SELECT counter FROM orders WHERE id = 42")
		if err != nil {
			return model.Reply{}, fmt.Errorf("your lock's Query: %v", err)
		}
		ob.Told = told
		if !ok { // the statement failed: its transaction's session was killed, say
			ob.Result = model.ResRejected
			return model.Reply{Result: model.ResRejected}, nil
		}
		ob.Result, ob.Value = model.ResAccepted, int(v)
		return model.Reply{Result: model.ResAccepted, Value: uint8(v)}, nil
	}
	conn := l.store
	if l.d.Level == model.LevelXact {
		conn = l.c
	}
	var v int
	err := conn.QueryRow(ctx, "SELECT counter FROM orders WHERE id = 42").Scan(&v)
	if err != nil && conn == l.c && l.ended(err) { // its transaction's session was killed
		ob.Result = model.ResRejected
		return model.Reply{Result: model.ResRejected}, nil
	}
	if err != nil {
		return model.Reply{}, fmt.Errorf("postgres read: %v", err)
	}
	ob.Result, ob.Value = model.ResAccepted, v
	return model.Reply{Result: model.ResAccepted, Value: uint8(v)}, nil
}

func (l *advisoryLock) write(ctx context.Context, c *client, v, tok, version int, ob *Obs) (model.Reply, error) {
	inside := l.d.Level == model.LevelXact
	conn := l.store
	if inside {
		conn = l.c
	}
	ob.Value = v
	var err error
	if l.tx != nil {
		ok, told, terr := l.tx.Exec(ctx, "UPDATE orders SET counter = $1 WHERE id = 42", int64(v))
		if terr != nil {
			return model.Reply{}, fmt.Errorf("your lock's Exec: %v", terr)
		}
		ob.Told = told
		if !ok {
			ob.Result = model.ResRejected // the statement failed in its transaction
			return model.Reply{Result: ob.Result}, nil
		}
	} else {
		_, err = conn.Exec(ctx, "UPDATE orders SET counter = $1 WHERE id = 42", v)
	}
	switch {
	case err != nil && inside && l.ended(err):
		ob.Result = model.ResRejected // the session was killed
	case err != nil:
		return model.Reply{}, fmt.Errorf("postgres write: %v", err)
	case inside:
		l.buffered = v
		ob.Result = model.ResOK // pending until COMMIT
	default:
		ob.Result = model.ResAccepted
	}
	return model.Reply{Result: ob.Result}, nil
}

// release is pg_advisory_unlock(42) (level=session) or COMMIT (xact).
func (l *advisoryLock) release(ctx context.Context, c *client, k model.ActionKind, ob *Obs) (model.Reply, error) {
	if err := c.lookBefore(ctx, ob); err != nil {
		return model.Reply{}, err
	}
	if l.user != nil {
		if l.look != nil {
			defer l.grants.set(l.i, 0) // as below
		}
		ok, told, err := l.user.release(ctx, l.i, ob.Before)
		if err != nil {
			return model.Reply{}, err
		}
		if l.tx != nil { // its COMMIT
			ob.Told = told
			return l.committed(ok, ob), nil
		}
		return toldReply(ob, ok, told), nil
	}
	if l.d.Level == model.LevelXact {
		return l.commit(ctx, ob)
	}
	defer l.grants.set(l.i, 0) // its grant ends with its release, whatever the answer
	var ok bool
	var pid int
	err := l.c.QueryRow(ctx, "SELECT pg_advisory_unlock(42), pg_backend_pid()").Scan(&ok, &pid)
	if err == nil && l.watch != nil {
		if err := l.resetDone(ctx, pid); err != nil {
			return model.Reply{}, err
		}
	}
	switch {
	case err != nil && l.ended(err): // its session was ended by the server
		ob.Result = model.ResNoop
	case err != nil:
		return model.Reply{}, fmt.Errorf("postgres pg_advisory_unlock: %v", err)
	case ok:
		ob.Result = model.ResOK
	default: // false, with a WARNING: the session holds no such lock
		ob.Result = model.ResNoop
	}
	return model.Reply{Result: ob.Result}, nil
}

// commit is COMMIT: it applies a buffered write, or fails (and rolls back)
// if the session was killed.
func (l *advisoryLock) commit(ctx context.Context, ob *Obs) (model.Reply, error) {
	ok := false
	if !l.c.IsClosed() {
		_, err := l.c.Exec(ctx, "COMMIT")
		switch {
		case err == nil:
			ok = true
		case !l.ended(err):
			return model.Reply{}, fmt.Errorf("postgres COMMIT: %v", err)
		}
	}
	return l.committed(ok, ob), nil
}

// committed is the reply of a COMMIT that succeeded (ok) or failed, with
// the write buffered in its transaction (if any).
func (l *advisoryLock) committed(ok bool, ob *Obs) model.Reply {
	buffered := l.buffered
	l.buffered = 0
	switch {
	case buffered != 0 && ok:
		ob.Result, ob.Value = model.ResAccepted, buffered
	case buffered != 0:
		ob.Result, ob.Value = model.ResRejected, buffered
	case ok:
		ob.Result = model.ResOK
	default:
		ob.Result = model.ResNoop
	}
	return model.Reply{Result: ob.Result}
}

// lockHolderPid is the backend that holds advisory lock 42 now (0: none).
func lockHolderPid(ctx context.Context, c *pgx.Conn) (int, error) {
	var pid int
	err := c.QueryRow(ctx, `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = 0 AND objid = 42 AND objsubid = 1 AND granted`).Scan(&pid)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: the backend of a grant (pg_locks): %v", err)
	}
	return pid, nil
}

// advisoryObserver names the advisory lock's holder (see advisoryWorld).
type advisoryObserver struct {
	c       *pgx.Conn
	clients int
	grants  *advisoryGrants
	byGrant bool // pool=tx, level=session: by the clients' grants
	untimed bool // end=keepalive: a held lock has no expiry
	named   int  // byGrant: the holder named last
}

func (o *advisoryObserver) holder(ctx context.Context) (int, error) {
	h, _, err := o.look(ctx)
	return h, err
}

func (o *advisoryObserver) look(ctx context.Context) (int, int64, error) {
	var pid int
	var app string
	err := o.c.QueryRow(ctx, `SELECT l.pid, coalesce(a.application_name, '') FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.classid = 0 AND l.objid = 42 AND l.objsubid = 1 AND l.granted`).Scan(&pid, &app)
	if errors.Is(err, pgx.ErrNoRows) {
		o.named = HolderNone
		return HolderNone, -2, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("observer: pg_locks: %v", err)
	}
	if !o.byGrant {
		for i := 0; i < o.clients; i++ {
			if model.ClientName(i) == app && o.untimed {
				return i, -1, nil
			}
			if model.ClientName(i) == app {
				return i, 0, nil
			}
		}
		return HolderUnknown, 0, nil
	}
	grants := o.grants.get() // the pool keeps its backends: no expiry
	if o.named >= 0 && grants[o.named] == pid {
		return o.named, -1, nil
	}
	for i, g := range grants {
		if g == pid {
			o.named = i
			return i, -1, nil
		}
	}
	if o.named == HolderNone {
		o.named = HolderUnknown // held by a backend no client was granted it on
	}
	return o.named, -1, nil
}

// advisoryOK reports whether an advisory-lock design can be played.
func advisoryOK(d *model.Design) error {
	if d.Storage != model.StoragePlain || d.Check != model.CheckTrust || d.Bug != model.BugNone || d.Delays > 0 || d.Crashes > 0 || d.Restarts > 0 {
		return fmt.Errorf("design %s: an advisory lock is played for real with plain storage, check=trust, no delays, crashes, restarts or planted bug", d.Name())
	}
	return nil
}

// advisoryPoolWords is the report's words for the pool between the
// clients and the server.
func advisoryPoolWords(d *model.Design) string {
	switch d.Pool {
	case model.PoolTx:
		return " through PgBouncer (pool_mode=transaction, 2 server connections, server_round_robin=1)"
	case model.PoolTxReset:
		return " through PgBouncer (pool_mode=transaction, 2 server connections, server_round_robin=1, DISCARD ALL after each transaction)"
	}
	return ""
}

// advisoryTimeout is the server's timeout that ends an idle holder.
func advisoryTimeout(d *model.Design) string {
	if d.Level == model.LevelXact {
		return "idle_in_transaction_session_timeout"
	}
	if d.Pool != model.PoolNone {
		return "no timeout (PgBouncer keeps its backends)"
	}
	if d.End == model.EndKeepalive {
		return "no idle timeout (TCP keepalive only; a pause answers it)"
	}
	return "idle_session_timeout"
}
