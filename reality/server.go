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
// port, with persistence off. Stop it when done; it also dies with the
// process that started it (Linux: parent-death signal).
type Server struct {
	addr    string
	version string
	dir     string
	cmd     *exec.Cmd
	out     *syncBuffer
	done    chan struct{} // closed when the process has exited
	waitErr error
	once    sync.Once
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
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := startOnce(ctx, bin)
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

func startOnce(ctx context.Context, bin string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("no free loopback port: %v", err)
	}
	dir, err := os.MkdirTemp("", "lockcheck-redis-")
	if err != nil {
		return nil, err
	}
	s := &Server{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, out: &syncBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(bin,
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--databases", "16",
		"--logfile", "",
	)
	s.cmd.Stdout = s.out
	s.cmd.Stderr = s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %v", bin, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.done)
	}()
	c := redis.NewClient(clientOptions(s.addr, 0))
	defer c.Close()
	for {
		pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		err := c.Ping(pctx).Err()
		pcancel()
		if err == nil {
			break
		}
		select {
		case <-s.done:
			os.RemoveAll(dir)
			return nil, fmt.Errorf("%s exited at start (%v): %s", bin, s.waitErr, lastLine(s.out.String()))
		case <-ctx.Done():
			s.Stop()
			return nil, fmt.Errorf("%s on %s did not answer PING within the start budget: %v", bin, s.addr, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		s.Stop()
		return nil, fmt.Errorf("INFO server on %s: %v", s.addr, err)
	}
	s.version = infoField(info, "redis_version")
	return s, nil
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
	var err error
	s.once.Do(func() {
		defer os.RemoveAll(s.dir)
		select {
		case <-s.done:
			return
		default:
		}
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
			err = errors.New("redis-server did not stop on SIGTERM within 5s; killed")
		}
	})
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

// clientOptions are the go-redis options of every connection we open: one
// connection per client, no retries (a retried write could apply twice), no
// client-side extras, timeouts well inside a run's budget.
func clientOptions(addr string, db int) *redis.Options {
	return &redis.Options{
		Addr:            addr,
		DB:              db,
		Protocol:        2,
		MaxRetries:      -1,
		PoolSize:        1,
		MinIdleConns:    1,
		DialTimeout:     2 * time.Second,
		ReadTimeout:     2 * time.Second,
		WriteTimeout:    2 * time.Second,
		DisableIdentity: true,
	}
}
