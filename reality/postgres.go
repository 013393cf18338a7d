package reality

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"lockcheck/model"
)

// A database row lock design (lock=db) is played on a PostgreSQL of the
// run's own (Debian's postgresql: initdb and postgres in a temporary
// directory, on a free loopback port; as root they run as the postgres
// user, since both refuse to run as root; every connection, TCP or Unix
// socket, needs the process's own random password) with
// github.com/jackc/pgx/v5.
// The lock is the row locks(id=42), taken with BEGIN; SELECT … FOR UPDATE
// NOWAIT in the client's lock session; the counter is the row orders(42).
// With tx=inside the job reads and updates the counter in the lock's
// transaction and COMMIT applies it and unlocks the row; with tx=outside
// a second connection reads and writes it (autocommit) and the lock
// session's COMMIT only unlocks. Each lock session sets
// idle_in_transaction_session_timeout to the TTL less half a tick: a paused
// client's idle session is killed by the server, which frees the row, as
// the model says. The model's blocked SELECT … FOR UPDATE is played as a
// NOWAIT attempt at each of the schedule's acquire steps (the schedule says
// when the blocked request returns); the observer names the row's locker
// with pgrowlocks.

// PostgresBin is where Debian's PostgreSQL 15 programs are.
const PostgresBin = "/usr/lib/postgresql/15/bin"

// FindPostgres returns the folder of initdb and postgres.
func FindPostgres() (string, error) {
	for _, dir := range []string{PostgresBin} {
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("PostgreSQL not found (%s/postgres): apt-get install -y postgresql", PostgresBin)
}

// PostgresServer is a PostgreSQL of our own.
type PostgresServer struct {
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
	out  *syncBuffer
}

// asPostgres runs cmd as the postgres user when we are root.
func asPostgres(cmd *exec.Cmd, dir string) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true} // Setpgid: see Server.run
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root, and no postgres user to run PostgreSQL as: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(p, uid, gid)
	}); err != nil {
		return err
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	return nil
}

// StartPostgres initialises a cluster in a temporary directory and starts
// it on a free loopback port (bounded by ctx and 60 s).
func StartPostgres(ctx context.Context) (*PostgresServer, error) {
	bin, err := FindPostgres()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	dir, err := serverDir("pg")
	if err != nil {
		return nil, err
	}
	os.Chmod(dir, 0o755)
	data := filepath.Join(dir, "data")
	out := &syncBuffer{}
	// password authentication (SCRAM) on every connection, TCP and the
	// Unix socket alike: with trust, any local user could connect to the
	// test's server while it runs. The password is this process's own
	// (pgPassword), given to initdb in a file of the server's folder.
	pwfile := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(pgPassword+"\n"), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=scram-sha-256", "--pwfile="+pwfile, "-E", "UTF8", "--no-sync", "--no-instructions")
	initdb.Stdout, initdb.Stderr = out, out
	if err := asPostgres(initdb, dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := initdb.Run(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, lastLine(out.String()))
	}
	os.Remove(pwfile)
	// a free port can be taken by another server starting at once (the
	// tests start several in parallel): postgres then exits at start, and
	// a new port is tried
	s, exited, err := startRetried(func() (*PostgresServer, bool, error) { return startPostgresOn(ctx, bin, dir, data, out) })
	if exited {
		os.RemoveAll(dir)
	}
	return s, err
}

// startPostgresOn starts the cluster in data on a free port; exited
// says it exited at start (its port taken, say).
func startPostgresOn(ctx context.Context, bin, dir, data string, out *syncBuffer) (*PostgresServer, bool, error) {
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, false, err
	}
	s := &PostgresServer{dir: dir, port: port, done: make(chan struct{}), out: out}
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "shared_buffers=16MB", "-c", "max_connections=50", "-c", "logging_collector=off")
	s.cmd.Stdout, s.cmd.Stderr = out, out
	if err := asPostgres(s.cmd, dir); err != nil {
		os.RemoveAll(dir)
		return nil, false, err
	}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, false, fmt.Errorf("start postgres: %v", err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	for {
		c, err := pgx.Connect(ctx, s.URL("postgres"))
		if err == nil {
			defer c.Close(context.Background())
			if _, err := c.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pgrowlocks"); err != nil {
				s.Stop()
				return nil, false, fmt.Errorf("postgres: CREATE EXTENSION pgrowlocks: %v", err)
			}
			return s, false, nil
		}
		select {
		case <-s.done:
			return nil, true, fmt.Errorf("postgres exited at start: %s", pgStartError(out.String()))
		case <-ctx.Done():
			s.Stop()
			return nil, false, fmt.Errorf("postgres did not accept connections within the start budget: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// pgStartError is the line of postgres's output that says why it
// exited: the first FATAL or "could not" line, else the last.
func pgStartError(out string) string { return causeLine(out, "FATAL", "could not") }

// Addr is host:port.
func (s *PostgresServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// URL is a connection URL for application name app.
func (s *PostgresServer) URL(app string) string { return pgURL(s.Addr(), app) }

func pgURL(addr, app string) string {
	return "postgres://postgres:" + pgPassword + "@" + addr + "/postgres?sslmode=disable&application_name=" + app
}

// pgPassword is the password of the postgres user on the servers this
// process starts: random, in memory only (the servers' and their clients'
// connections are all made by this process).
var pgPassword = func() string {
	b := make([]byte, 16)
	if _, err := crand.Read(b); err != nil {
		panic("reality: no random bytes for the PostgreSQL password: " + err.Error())
	}
	return hex.EncodeToString(b)
}()

// Stop shuts the server down (fast shutdown, then SIGKILL) and removes its
// directory.
func (s *PostgresServer) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	os.RemoveAll(s.dir)
}

// pgSetup creates the lock row and the counter row, the counter at 0.
func pgSetup(ctx context.Context, c *pgx.Conn) error {
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS locks (id int PRIMARY KEY)",
		"CREATE TABLE IF NOT EXISTS orders (id int PRIMARY KEY, counter int NOT NULL)",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("postgres setup: %s: %v", q, err)
		}
	}
	if err := pgDrain(ctx, c); err != nil {
		return err
	}
	for _, q := range []string{
		"INSERT INTO locks VALUES (42) ON CONFLICT DO NOTHING",
		"INSERT INTO orders VALUES (42, 0) ON CONFLICT (id) DO UPDATE SET counter = 0",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("postgres setup: %s: %v", q, err)
		}
	}
	return nil
}

// pgHeld lists the backends, other than c's, that hold an advisory lock
// or a lock on the run's tables.
const pgHeld = `SELECT DISTINCT pid FROM pg_locks WHERE pid IS NOT NULL AND pid <> pg_backend_pid()
	AND (locktype = 'advisory' OR relation IN ('locks'::regclass, 'orders'::regclass)) ORDER BY pid`

// pgDrain waits until no backend of an earlier run on the server holds a
// lock of the run's (pgHeld), as drainEarlier does for Redis: a session
// whose client has gone ends a moment later, its locks with it, and a
// pooled backend (PgBouncer, pool=tx) keeps a session-level advisory
// lock until its pooler closes it. One still there after drainBound is
// ended (pg_terminate_backend).
func pgDrain(ctx context.Context, c *pgx.Conn) error {
	deadline := time.Now().Add(drainBound)
	for {
		rows, err := c.Query(ctx, pgHeld)
		if err != nil {
			return fmt.Errorf("postgres setup: the locks of an earlier run: %v", err)
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			return fmt.Errorf("postgres setup: the locks of an earlier run: %v", err)
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				if _, err := c.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
					return fmt.Errorf("postgres setup: end backend %d of an earlier run: %v", pid, err)
				}
			}
			deadline = time.Now().Add(drainBound)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres setup: waiting for %d backends of an earlier run to release their locks: %v", len(pids), ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// dbLock is one client's lock session (and, for tx=outside, its second
// connection for the counter).
type dbLock struct {
	url, storeURL string
	timeout       time.Duration
	c             *pgx.Conn // the lock session
	store         *pgx.Conn // tx=outside: the counter's connection
	inTx          bool      // the lock session's transaction is open
	buffered      int       // tx=inside: the UPDATE's value, not yet committed (0: none)
}

func (l *dbLock) connect(ctx context.Context) error {
	var err error
	if l.c, err = pgx.Connect(ctx, l.url); err != nil {
		return fmt.Errorf("postgres lock session: %v", err)
	}
	if _, err := l.c.Exec(ctx, fmt.Sprintf("SET idle_in_transaction_session_timeout = %d", l.timeout.Milliseconds())); err != nil {
		return fmt.Errorf("postgres: SET idle_in_transaction_session_timeout: %v", err)
	}
	if l.storeURL != "" {
		if l.store, err = pgx.Connect(ctx, l.storeURL); err != nil {
			return fmt.Errorf("postgres counter connection: %v", err)
		}
	}
	return nil
}

func (l *dbLock) close() {
	for _, c := range []*pgx.Conn{l.c, l.store} {
		if c != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			c.Close(ctx)
			cancel()
		}
	}
}

// acquire: BEGIN; SELECT … FOR UPDATE NOWAIT.
func (l *dbLock) acquire(ctx context.Context) (bool, int, error) {
	if l.c.IsClosed() { // its session was killed: a new one
		if err := l.connect(ctx); err != nil {
			return false, 0, err
		}
	}
	if _, err := l.c.Exec(ctx, "BEGIN"); err != nil {
		return false, 0, fmt.Errorf("postgres BEGIN: %v", err)
	}
	_, err := l.c.Exec(ctx, "SELECT id FROM locks WHERE id = 42 FOR UPDATE NOWAIT")
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "55P03" { // lock_not_available: the model's blocked request
		if _, err := l.c.Exec(ctx, "ROLLBACK"); err != nil {
			return false, 0, fmt.Errorf("postgres ROLLBACK: %v", err)
		}
		return false, 0, nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("postgres SELECT … FOR UPDATE: %v", err)
	}
	l.inTx = true
	return true, 0, nil
}

// read is the counter, in the lock's transaction (inside) or through the
// other connection; ok false when the lock's session was killed.
func (l *dbLock) read(ctx context.Context, inside bool) (int, bool, error) {
	c := l.store
	if inside {
		c = l.c
	}
	var v int
	err := c.QueryRow(ctx, "SELECT counter FROM orders WHERE id = 42").Scan(&v)
	if err != nil && inside && c.IsClosed() {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("postgres read: %v", err)
	}
	return v, true, nil
}

// write updates the counter: in the transaction (inside: applied at
// COMMIT) or through the other connection.
func (l *dbLock) write(ctx context.Context, inside bool, v int) (bool, error) {
	c := l.store
	if inside {
		c = l.c
	}
	_, err := c.Exec(ctx, "UPDATE orders SET counter = $1 WHERE id = 42", v)
	if err != nil && inside && c.IsClosed() {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("postgres write: %v", err)
	}
	if inside {
		l.buffered = v
	}
	return true, nil
}

// release is COMMIT: ok false when the session was killed (the write, if
// any, rolled back).
func (l *dbLock) release(ctx context.Context) (bool, error) {
	l.inTx = false
	if l.c.IsClosed() {
		return false, nil
	}
	_, err := l.c.Exec(ctx, "COMMIT")
	if err != nil && l.c.IsClosed() {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("postgres COMMIT: %v", err)
	}
	return true, nil
}

// pgObserver names the row's locker: pgrowlocks gives the locking
// backends' pids, pg_stat_activity their application names (the clients'
// letters).
type pgObserver struct {
	c       *pgx.Conn
	clients int
}

func (o *pgObserver) holder(ctx context.Context) (int, error) {
	h, _, err := o.look(ctx)
	return h, err
}

func (o *pgObserver) look(ctx context.Context) (int, int64, error) {
	rows, err := o.c.Query(ctx, `SELECT a.application_name FROM pgrowlocks('locks') r, unnest(r.pids) p, pg_stat_activity a WHERE a.pid = p`)
	if err != nil {
		return 0, 0, fmt.Errorf("observer: pgrowlocks: %v", err)
	}
	defer rows.Close()
	h := HolderNone
	for rows.Next() {
		var app string
		if err := rows.Scan(&app); err != nil {
			return 0, 0, fmt.Errorf("observer: pgrowlocks: %v", err)
		}
		h = HolderUnknown
		for i := 0; i < o.clients; i++ {
			if model.ClientName(i) == app {
				h = i
			}
		}
	}
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("observer: pgrowlocks: %v", err)
	}
	if h == HolderNone {
		return h, -2, nil
	}
	return h, 0, nil
}

// dbOK reports whether a database design can be played.
func dbOK(d *model.Design) error {
	if d.Fence != model.FenceNone || d.Storage != model.StoragePlain || d.Check != model.CheckTrust || d.RenewTicks > 0 || d.Bug != model.BugNone || d.Delays > 0 || d.Crashes > 0 {
		return fmt.Errorf("design %s: the database row lock is played for real with fence=none, plain storage, check=trust, renew=0, no delays, crashes or planted bug", d.Name())
	}
	return nil
}
