package reality

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// A pooled advisory-lock design (lock=advisory, pool=tx|tx-reset) talks
// to its PostgreSQL through a PgBouncer of the run's own: Debian's
// pgbouncer (1.18), on a free loopback port, run as the postgres user (it
// refuses to run as root), in transaction pooling mode over two server
// connections handed out in turn (server_round_robin=1: a released
// server goes to the end of the idle list, the next transaction takes
// the head). Clients authenticate with SCRAM and the process's own
// password, as on the server; the Unix socket is off. pool=tx-reset adds
// server_reset_query = DISCARD ALL with server_reset_query_always = 1.

// PgBouncerBin is Debian's pgbouncer.
const PgBouncerBin = "/usr/sbin/pgbouncer"

// FindPgBouncer returns the path of pgbouncer.
func FindPgBouncer() (string, error) {
	if _, err := os.Stat(PgBouncerBin); err == nil {
		return PgBouncerBin, nil
	}
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("PgBouncer not found (%s): apt-get install -y pgbouncer", PgBouncerBin)
}

// PgBouncer is a PgBouncer of our own in front of one PostgreSQL.
type PgBouncer struct {
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
	out  *syncBuffer
}

// poolBackends is the pool's size, the model's two backends (poolNode).
const poolBackends = 2

// StartPgBouncer starts a PgBouncer in front of the PostgreSQL at pgAddr
// (host:port), in transaction pooling mode over two server connections,
// with DISCARD ALL after every transaction when reset is set; it opens
// both server connections and leaves them idle, in a known order, before
// it returns (bounded by ctx and 30 s).
func StartPgBouncer(ctx context.Context, pgAddr string, reset bool) (*PgBouncer, error) {
	bin, err := FindPgBouncer()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	host, pgPort, ok := strings.Cut(pgAddr, ":")
	if !ok {
		return nil, fmt.Errorf("PostgreSQL address %q: want host:port", clipText(pgAddr))
	}
	dir, err := serverDir("pgbouncer")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	resetQuery, always := "", 0
	if reset {
		resetQuery, always = "DISCARD ALL", 1
	}
	ini := fmt.Sprintf(`[databases]
postgres = host=%s port=%s dbname=postgres

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = scram-sha-256
auth_file = %s
pool_mode = transaction
default_pool_size = %d
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 50
server_round_robin = 1
server_reset_query = %s
server_reset_query_always = %d
server_check_delay = 3600
server_idle_timeout = 3600
server_lifetime = 3600
ignore_startup_parameters = extra_float_digits
`, host, pgPort, port, filepath.Join(dir, "userlist.txt"), poolBackends, resetQuery, always)
	if err := os.WriteFile(filepath.Join(dir, "pgbouncer.ini"), []byte(ini), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// the password in plain text: PgBouncer then speaks SCRAM both to its
	// clients and to the server
	if err := os.WriteFile(filepath.Join(dir, "userlist.txt"), []byte(`"postgres" "`+pgPassword+`"`+"\n"), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	out := &syncBuffer{}
	b := &PgBouncer{dir: dir, port: port, done: make(chan struct{}), out: out}
	b.cmd = exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	b.cmd.Stdout, b.cmd.Stderr = out, out
	if err := asPostgres(b.cmd, dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := b.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start pgbouncer: %v", err)
	}
	go func() { b.cmd.Wait(); close(b.done) }()
	if err := b.warm(ctx); err != nil {
		b.Stop()
		return nil, err
	}
	return b, nil
}

// warm opens the pool's two server connections, by two transactions open
// at once, and ends them in order: both servers are then idle, the first
// one at the head of the list.
func (b *PgBouncer) warm(ctx context.Context) error {
	var conns [poolBackends]*pgx.Conn
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close(context.Background())
			}
		}
	}()
	for k := range conns {
		for {
			c, err := pgx.Connect(ctx, bouncerURL(b.Addr(), "warm-up"))
			if err == nil {
				conns[k] = c
				break
			}
			select {
			case <-b.done:
				return fmt.Errorf("pgbouncer exited at start: %s", lastLine(b.out.String()))
			case <-ctx.Done():
				return fmt.Errorf("pgbouncer did not accept connections within the start budget: %v", err)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	pids := map[int]bool{}
	for _, c := range conns {
		var pid int
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			return fmt.Errorf("pgbouncer warm-up: BEGIN: %v", err)
		}
		if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			return fmt.Errorf("pgbouncer warm-up: %v", err)
		}
		pids[pid] = true
	}
	if len(pids) != poolBackends {
		return fmt.Errorf("pgbouncer warm-up: two open transactions ran on %d server connection(s), want %d", len(pids), poolBackends)
	}
	for _, c := range conns {
		if _, err := c.Exec(ctx, "COMMIT"); err != nil {
			return fmt.Errorf("pgbouncer warm-up: COMMIT: %v", err)
		}
	}
	return nil
}

// bouncerURL is a connection URL through PgBouncer: the simple query
// protocol, since PgBouncer 1.18 in transaction pooling mode keeps no
// prepared statement from one transaction to the next.
func bouncerURL(addr, app string) string {
	return pgURL(addr, app) + "&default_query_exec_mode=simple_protocol"
}

// Addr is host:port.
func (b *PgBouncer) Addr() string { return "127.0.0.1:" + strconv.Itoa(b.port) }

// Stop stops PgBouncer (SIGINT: immediate shutdown; then SIGKILL) and
// removes its directory.
func (b *PgBouncer) Stop() {
	_ = b.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-b.done:
	case <-time.After(5 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done
	}
	os.RemoveAll(b.dir)
}
