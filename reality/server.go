package reality

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// ServerBinary is the name of the Redis server program looked up on PATH.
const ServerBinary = "redis-server"

// Server is a redis-server process of our own, listening on a free loopback
// port. Stop it when done; it also dies with the process that started it
// (Linux: parent-death signal). A lock node can be crashed (SIGKILL) and
// restarted on the same port and directory: with persistence on (an
// append-only file, fsync always) it comes back with its keys.
type Server struct {
	addr    string
	version string
	dir     string
	bin     string
	args    []string
	persist bool
	out     *syncBuffer
	mu      sync.Mutex
	proc    *proc // the running process; nil after a crash
	stopped bool
}

// proc is one run of the server program.
type proc struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	waitErr error
}

// syncBuffer collects the server's output for error messages.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() < 64<<10 {
		s.b.Write(p)
	}
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// FindServer returns the path of redis-server, or an error saying how to
// install it.
func FindServer() (string, error) {
	p, err := exec.LookPath(ServerBinary)
	if err != nil {
		return "", fmt.Errorf("%s not found on PATH (install it: apt-get install -y redis-server)", ServerBinary)
	}
	return p, nil
}

// StartServer starts bin (a redis-server) on a free port of 127.0.0.1, with
// no RDB snapshots and no append-only file, and waits until it answers PING.
// It tries a few ports in case another process takes the free port first.
// The whole start is bounded by ctx and by 10 seconds.
func StartServer(ctx context.Context, bin string) (*Server, error) {
	return StartServerPersist(ctx, bin, false)
}

// StartServerPersist is StartServer with, when persist is true, an
// append-only file synced on every write: a lock node that keeps its keys
// and its fence counter across a crash (design parameter persist=1).
func StartServerPersist(ctx context.Context, bin string, persist bool) (*Server, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := startOnce(ctx, bin, persist)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startOnce(ctx context.Context, bin string, persist bool) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("no free loopback port: %v", err)
	}
	dir, err := serverDir("redis")
	if err != nil {
		return nil, err
	}
	aof := []string{"--appendonly", "no"}
	if persist {
		aof = []string{"--appendonly", "yes", "--appendfsync", "always"}
	}
	s := &Server{
		addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, bin: bin, persist: persist,
		args: append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
			"--dir", dir, "--databases", "16", "--logfile", ""}, aof...),
		out: &syncBuffer{},
	}
	if err := s.run(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c := redis.NewClient(admin(clientOptions(s.addr, 0)))
	defer c.Close()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		s.Stop()
		return nil, fmt.Errorf("INFO server on %s: %v", s.addr, err)
	}
	s.version = infoField(info, "redis_version")
	return s, nil
}

// run starts the program and waits until it answers PING.
func (s *Server) run(ctx context.Context) error {
	p := &proc{cmd: exec.Command(s.bin, s.args...), done: make(chan struct{})}
	p.cmd.Stdout = s.out
	p.cmd.Stderr = s.out
	// a process group of its own: a Ctrl-C at the terminal signals the
	// whole foreground group, and the server must not die under a run
	// that is still stopping (a step's request refused before the run
	// hears the signal); the run stops it itself, and the parent-death
	// signal ends it if the run is killed outright
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %v", s.bin, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	c := redis.NewClient(admin(crashableOptions(s.addr, 0))) // refused dials until it listens
	defer c.Close()
	for {
		pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		err := c.Ping(pctx).Err()
		pcancel()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited at start (%v): %s", s.bin, p.waitErr, lastLine(s.out.String()))
		case <-ctx.Done():
			s.kill(syscall.SIGKILL)
			return fmt.Errorf("%s on %s did not answer PING within the start budget: %v", s.bin, s.addr, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// kill sends sig to the running process and waits (up to 5s, then
// SIGKILL) for it to exit.
func (s *Server) kill(sig syscall.Signal) error {
	s.mu.Lock()
	p := s.proc
	s.proc = nil
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return nil
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return errors.New("redis-server did not stop within 5s; killed")
	}
}

// Crash kills the server at once (SIGKILL): no shutdown, no final save.
func (s *Server) Crash() error { return s.kill(syscall.SIGKILL) }

// Freeze stops the running server (SIGSTOP) until Thaw: what reaches it
// meanwhile waits in its sockets, and it reads all of it in one pass of
// its event loop when it goes on (a rejoin's ACKs: replicaSet.rejoin).
func (s *Server) Freeze() error { return s.signal(syscall.SIGSTOP) }

// Thaw lets a frozen server go on (SIGCONT).
func (s *Server) Thaw() error { return s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		return fmt.Errorf("%s: no running server to signal %v", s.addr, sig)
	}
	return p.cmd.Process.Signal(sig)
}

// Restart starts the crashed server again on the same port and directory
// (with persistence, it reloads its append-only file) and waits for PING.
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	running, stopped := s.proc != nil, s.stopped
	s.mu.Unlock()
	if running || stopped {
		return fmt.Errorf("restart %s: the server is running or stopped for good", s.addr)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return s.run(ctx)
}

// Down reports whether the server is crashed and not yet restarted.
func (s *Server) Down() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc == nil && !s.stopped
}

// Persist reports whether the server keeps its data across a crash.
func (s *Server) Persist() bool { return s.persist }

// causeLine is the line of a server's output that says why it exited:
// the first that holds one of marks, else the last.
func causeLine(out string, marks ...string) string {
	for _, l := range strings.Split(out, "\n") {
		for _, m := range marks {
			if strings.Contains(l, m) {
				return strings.TrimSpace(l)
			}
		}
	}
	return lastLine(out)
}

// startRetried starts a server (start) again while it exits at its start
// (exited), three tries in all: a port free when chosen can be taken by
// another server starting at once before this one binds it.
func startRetried[S any](start func() (s S, exited bool, err error)) (S, bool, error) {
	for try := 1; ; try++ {
		s, exited, err := start()
		if !exited || try == 3 {
			return s, exited, err
		}
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "no output"
	}
	return s
}

func infoField(info, name string) string {
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), name+":"); ok {
			return v
		}
	}
	return "unknown"
}

// Addr is host:port of the server.
func (s *Server) Addr() string { return s.addr }

// Version is the server's redis_version.
func (s *Server) Version() string { return s.version }

// Stop terminates the server (SIGTERM, then SIGKILL after 5 s) and removes
// its directory. It is safe to call more than once.
func (s *Server) Stop() error {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	err := s.kill(syscall.SIGTERM)
	os.RemoveAll(s.dir)
	return err
}

// CheckLoopback accepts host:port only on the loopback interface
// (localhost, 127.0.0.0/8, ::1): real runs send traffic nowhere else.
func CheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port, e.g. 127.0.0.1:6379", clipText(addr))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port %q: want 1 to 65535", clipText(addr), clipText(port))
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%q: want a loopback address (localhost, 127.0.0.1, ::1): real runs stay on this machine", clipText(addr))
}

func clipText(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

func init() {
	// go-redis logs every failed dial to stderr; here a refused dial is an
	// answer (a crashed lock node), recorded in the run, not noise to print.
	redis.SetLogger(quietLogger{})
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...interface{}) {}

// clientOptions are the go-redis options of every connection we open: one
// connection per client, no retries (a retried write could apply twice), no
// client-side extras, timeouts well inside a run's budget (its 30 s of
// slack) but far above any stall: on a 2-core machine at load 20 a
// loopback GET once took over 2 s, and such a step must make the run late
// (void, played again with a longer tick), not end it with an i/o timeout.
func clientOptions(addr string, db int) *redis.Options {
	return &redis.Options{
		Addr:               addr,
		DB:                 db,
		Protocol:           2,
		MaxRetries:         -1,
		PoolSize:           1,
		MinIdleConns:       1,
		DialTimeout:        10 * time.Second,
		DialerRetries:      1,
		DialerRetryTimeout: time.Millisecond,
		ReadTimeout:        10 * time.Second,
		WriteTimeout:       10 * time.Second,
		DisableIdentity:    true,
	}
}

// crashableOptions are clientOptions for a lock node that can crash: a
// refused dial is an answer (the node is down), and go-redis must not stop
// dialing after PoolSize failures (its pool then fails fast until a probe,
// once a second, gets through), so the pool's size is far above any run's
// number of requests.
func crashableOptions(addr string, db int) *redis.Options {
	o := clientOptions(addr, db)
	o.PoolSize = 1 << 16
	return o
}
