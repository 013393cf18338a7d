package reality

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"lockcheck/model"
)

// pgWorld is a PostgreSQL row lock (postgres.go) on the server at
// Options.Postgres, or on one of the run's own. The counter lives in the
// same database: read and written in the lock's transaction (tx=inside)
// or through a second connection (tx=outside).
type pgWorld struct {
	redisStorage
	server *PostgresServer // started for the run, or nil
	addr   string
	pgc    *pgx.Conn // the observer's connection
	obs    *pgObserver
}

func (w *pgWorld) start(ctx context.Context) error {
	if err := w.startStorage(ctx); err != nil {
		return err
	}
	w.addr = w.opts.Postgres
	if w.addr == "" {
		ps, err := StartPostgres(ctx)
		if err != nil {
			return err
		}
		w.server, w.addr = ps, ps.Addr()
	}
	var err error
	if w.pgc, err = pgx.Connect(ctx, pgURL(w.addr, "observer")); err != nil {
		return fmt.Errorf("postgres observer: %v", err)
	}
	if err := pgSetup(ctx, w.pgc); err != nil {
		return err
	}
	w.obs = &pgObserver{c: w.pgc, clients: w.d.Clients}
	return nil
}

func (w *pgWorld) observer() looker { return w.obs }

func (w *pgWorld) lock(ctx context.Context, i int, h *netHold) (realLock, error) {
	via, err := h.via(w.addr)
	if err != nil {
		return nil, err
	}
	l := &dbLock{url: pgURL(via, model.ClientName(i)), timeout: TTL(w.d.TTLTicks, w.opts.Tick)}
	if w.d.Tx == model.TxOutside {
		l.storeURL = pgURL(via, model.ClientName(i)+"-store")
	}
	if err := l.connect(ctx); err != nil {
		return nil, fmt.Errorf("client %s: %v", model.ClientName(i), err)
	}
	return &pgLockConn{noUnlock: noUnlock{}, d: w.d, db: l}, nil
}

func (w *pgWorld) counter(ctx context.Context) (int, error) {
	var n int
	if err := w.pgc.QueryRow(ctx, "SELECT counter FROM orders WHERE id = 42").Scan(&n); err != nil {
		return 0, fmt.Errorf("final counter: %v", err)
	}
	return n, nil
}

func (w *pgWorld) stop() {
	if w.pgc != nil {
		w.pgc.Close(context.Background())
	}
	if w.server != nil {
		w.server.Stop()
	}
	w.stopStorage()
}

// pgLockConn is a client's row lock session (and, tx=outside, its counter
// connection): BEGIN; SELECT … FOR UPDATE NOWAIT to acquire, COMMIT to
// release; the job's read and write go through the database.
type pgLockConn struct {
	noUnlock
	d  *model.Design
	db *dbLock
}

func (l *pgLockConn) connect(context.Context) error { return nil } // connected when made
func (l *pgLockConn) close()                        { l.db.close() }

func (l *pgLockConn) incr(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("a row lock is played with fence=none: no INCR")
}

func (l *pgLockConn) expire(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("a row lock has no EXPIRE")
}

func (l *pgLockConn) renew(context.Context, *client, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("a row lock is played with renew=0: no renewal")
}

func (l *pgLockConn) acquire(ctx context.Context, c *client, ob *Obs) (model.Reply, error) {
	won, tok, err := l.db.acquire(ctx)
	if err != nil {
		return model.Reply{}, err
	}
	return wonReply(l.d, won, tok, ob), nil
}

func (l *pgLockConn) read(ctx context.Context, c *client, tok int, ob *Obs) (model.Reply, error) {
	v, ok, err := l.db.read(ctx, l.d.Tx == model.TxInside)
	if err != nil {
		return model.Reply{}, err
	}
	if !ok { // the lock's session was killed: the SELECT fails
		ob.Result = model.ResRejected
		return model.Reply{Result: model.ResRejected}, nil
	}
	ob.Result, ob.Value = model.ResAccepted, v
	return model.Reply{Result: model.ResAccepted, Value: uint8(v)}, nil
}

func (l *pgLockConn) write(ctx context.Context, c *client, v, tok, version int, ob *Obs) (model.Reply, error) {
	inside := l.d.Tx == model.TxInside
	ok, err := l.db.write(ctx, inside, v)
	if err != nil {
		return model.Reply{}, err
	}
	ob.Value = v
	switch {
	case !ok:
		ob.Result = model.ResRejected // the session was killed
	case inside:
		ob.Result = model.ResOK // pending until COMMIT
	default:
		ob.Result = model.ResAccepted
	}
	return model.Reply{Result: ob.Result}, nil
}

// release is COMMIT: it applies a buffered write, or fails (and rolls back)
// if the session was killed.
func (l *pgLockConn) release(ctx context.Context, c *client, k model.ActionKind, ob *Obs) (model.Reply, error) {
	if err := c.lookBefore(ctx, ob); err != nil {
		return model.Reply{}, err
	}
	buffered := l.db.buffered
	ok, err := l.db.release(ctx)
	if err != nil {
		return model.Reply{}, err
	}
	l.db.buffered = 0
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
	return model.Reply{Result: ob.Result}, nil
}
