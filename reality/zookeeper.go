package reality

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	"lockcheck/model"
)

// A ZooKeeper design (lock=zookeeper) is played on a ZooKeeper server of
// the run's own (Debian's zookeeper package: its jar run by java, a
// standalone server on a free loopback port with a temporary data
// directory, tickTime 10ms so that sessions expire within 10ms of their
// timeout), with github.com/go-zookeeper/zk as the client. Each client has
// a session of its own, through its proxy, whose timeout is the design's
// session ticks less half a tick (as PX is for Redis), and creates an
// ephemeral sequential node /lockcheck/lock/X-<seq> (X its letter; with
// protect=yes /lockcheck/lock/_c_<GUID>-X-<seq>, protected mode:
// zookeeper_lost.go) on its first acquire; the lowest node holds the lock,
// and its sequence number is the fencing token. A pause holds the client's traffic: no heartbeat
// reaches the server, the session expires and its node vanishes, as the
// model says.

// ZooKeeperJar is Debian's zookeeper jar.
const ZooKeeperJar = "/usr/share/java/zookeeper.jar"

// zkDir is the lock's parent node.
const zkDir = "/lockcheck/lock"

// FindZooKeeper checks that java and the zookeeper jar are installed.
func FindZooKeeper() (string, error) {
	java, err := exec.LookPath("java")
	if err == nil {
		_, err = os.Stat(ZooKeeperJar)
	}
	if err != nil {
		return "", fmt.Errorf("ZooKeeper not installed (%v): apt-get install -y zookeeper", err)
	}
	return java, nil
}

// ZooKeeperServer is a standalone ZooKeeper of our own.
type ZooKeeperServer struct {
	addr string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
	out  *syncBuffer
}

// StartZooKeeper starts a standalone server on a free loopback port and
// waits until it serves a session (bounded by ctx and 30 s). A server
// that exits at its start is started again on another port, twice at
// most: the port is free when chosen, but a JVM takes a second or more
// to bind it, and on a busy machine another server may take it first.
func StartZooKeeper(ctx context.Context) (*ZooKeeperServer, error) {
	java, err := FindZooKeeper()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, _, err := startRetried(func() (*ZooKeeperServer, bool, error) { return startZooKeeper(ctx, java) })
	return s, err
}

// zkStartError is the line of a server's output that says why it
// exited: the first that names an error or an exception, else the last.
func zkStartError(out string) string { return causeLine(out, "ERROR", "Exception") }

func startZooKeeper(ctx context.Context, java string) (s *ZooKeeperServer, exited bool, err error) {
	port, err := freePort()
	if err != nil {
		return nil, false, err
	}
	dir, err := serverDir("zk")
	if err != nil {
		return nil, false, err
	}
	cfg := fmt.Sprintf("tickTime=10\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nminSessionTimeout=20\nmaxSessionTimeout=600000\nadmin.enableServer=false\n4lw.commands.whitelist=\n",
		filepath.Join(dir, "data"), port)
	if err := os.WriteFile(filepath.Join(dir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, false, err
	}
	s = &ZooKeeperServer{addr: "127.0.0.1:" + strconv.Itoa(port), dir: dir, done: make(chan struct{}), out: &syncBuffer{}}
	s.cmd = exec.Command(java, "-Xmx128m", "-cp", ZooKeeperJar, "org.apache.zookeeper.server.ZooKeeperServerMain", filepath.Join(dir, "zoo.cfg"))
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true} // Setpgid: see Server.run
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, false, fmt.Errorf("start ZooKeeper: %v", err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	for {
		c, err := zkConnect(ctx, s.addr, 2*time.Second)
		if err == nil {
			c.Close()
			return s, false, nil
		}
		select {
		case <-s.done:
			os.RemoveAll(dir)
			return nil, true, fmt.Errorf("ZooKeeper exited at start: %s", zkStartError(s.out.String()))
		case <-ctx.Done():
			s.Stop()
			return nil, false, fmt.Errorf("ZooKeeper on %s did not serve a session within the start budget: %v", s.addr, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Addr is host:port.
func (s *ZooKeeperServer) Addr() string { return s.addr }

// Stop kills the server and removes its data.
func (s *ZooKeeperServer) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	os.RemoveAll(s.dir)
}

// oneHost is a host provider that never waits: go-zookeeper's own sleeps
// a second after trying every server, which would stall a run by many
// ticks when a resumed client reconnects after its session expired.
type oneHost struct{ addr string }

func (h *oneHost) Init(servers []string) error { h.addr = servers[0]; return nil }
func (h *oneHost) Len() int                    { return 1 }
func (h *oneHost) Next() (string, bool)        { return h.addr, false }
func (h *oneHost) Connected()                  {}

type zkQuiet struct{}

func (zkQuiet) Printf(string, ...interface{}) {}

// zkConnect opens a session and waits until it is established.
func zkConnect(ctx context.Context, addr string, timeout time.Duration) (*zk.Conn, error) {
	c, events, err := zk.Connect([]string{addr}, timeout, zk.WithLogger(zkQuiet{}), zk.WithHostProvider(&oneHost{}), zk.WithLogInfo(false))
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go func() { // drain: go-zookeeper drops events nobody reads, but keep it quiet
					for range events {
					}
				}()
				return c, nil
			}
		case <-t.C:
			c.Close()
			return nil, fmt.Errorf("no ZooKeeper session on %s within 5s", addr)
		case <-ctx.Done():
			c.Close()
			return nil, ctx.Err()
		}
	}
}

// zkSetup makes /lockcheck/lock empty with its sequence counter at the
// design's first token: a node's sequence number is its parent's count of
// child changes, so FirstToken children are created first (and kept,
// under another name, not to change the count again); without fillers
// for a user's client (zookeeper_user.go).
func zkSetup(ctx context.Context, c *zk.Conn, d *model.Design, fillers bool) error {
	if err := zkDeleteAll(c, zkDir); err != nil {
		return err
	}
	for _, p := range []string{"/lockcheck", zkDir} {
		if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("ZooKeeper create %s: %v", p, err)
		}
	}
	for k := 0; fillers && k < d.FirstToken; k++ {
		if _, err := c.Create(fmt.Sprintf("%s/filler-%d", zkDir, k), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			return fmt.Errorf("ZooKeeper filler: %v", err)
		}
	}
	return nil
}

func zkDeleteAll(c *zk.Conn, p string) error {
	kids, _, err := c.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ZooKeeper children of %s: %v", p, err)
	}
	for _, k := range kids {
		if err := zkDeleteAll(c, p+"/"+k); err != nil {
			return err
		}
	}
	if err := c.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("ZooKeeper delete %s: %v", p, err)
	}
	return nil
}

// zkQueue is the clients' nodes in sequence order: (client, sequence).
func zkQueue(c *zk.Conn, clients int) ([][2]int, error) {
	kids, _, err := c.Children(zkDir)
	if err != nil {
		return nil, fmt.Errorf("ZooKeeper children of %s: %v", zkDir, err)
	}
	var q [][2]int
	for _, k := range kids {
		who, seq, ok := strings.Cut(zkUnprotected(k), "-")
		if !ok || who == "filler" {
			continue
		}
		n, err := strconv.Atoi(seq)
		if err != nil {
			continue
		}
		h := HolderUnknown
		for i := 0; i < clients; i++ {
			if model.ClientName(i) == who {
				h = i
			}
		}
		q = append(q, [2]int{h, n})
	}
	sort.Slice(q, func(a, b int) bool { return q[a][1] < q[b][1] })
	return q, nil
}

// zkLock is one client's side: its session and its node.
type zkLock struct {
	c       *zk.Conn
	me      int
	clients int
	path    string // its node, "" when it has none
	seq     int
	// protect: protected mode (protect=yes): its node's name carries a
	// GUID (zookeeper_lost.go); lost: the GUID of a create whose reply
	// was lost, which its next acquire looks for ("" none)
	protect bool
	lost    string
	// lostOnce: a create's reply was lost (the session may own a node
	// the client does not know of)
	lostOnce bool
	// lostNode: planted bug (plant.zkFlipProtect with protect=no): the
	// node of the lost create, which the next acquire takes as its own
	lostNode string
}

// acquire creates the client's node if it has none (or its session lost
// it; after a lost create's reply, in protected mode, it first looks for
// that node by its GUID: findLost), then holds the lock if its node is the
// lowest. created is the new node's sequence number (0: no node created by
// this step).
func (l *zkLock) acquire(ctx context.Context) (won bool, created int, err error) {
	if l.path != "" {
		ok, _, err := l.c.Exists(l.path)
		for try := 0; try < 3 && errors.Is(err, zk.ErrConnectionClosed) && ctx.Err() == nil; try++ {
			// the connection went, not necessarily the session: ask again
			// (queued until go-zookeeper has reconnected; a session that
			// expired meanwhile answers for a new one, the node gone)
			ok, _, err = l.c.Exists(l.path)
		}
		if sessionLost(err) {
			ok, err = false, nil
		}
		if err != nil {
			return false, 0, fmt.Errorf("ZooKeeper exists %s: %v", l.path, err)
		}
		if !ok { // its session expired: the node is gone
			l.path = ""
		}
	}
	if l.path == "" && (l.lost != "" || l.lostNode != "") { // its last create's reply was lost
		if err := l.findLost(); err != nil {
			return false, 0, err
		}
	}
	if l.path == "" {
		p, err := l.c.Create(l.nodeName(l.newGUID()), nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			return false, 0, fmt.Errorf("ZooKeeper create: %v", err)
		}
		if err := l.take(p); err != nil {
			return false, 0, err
		}
		created = l.seq
	}
	q, err := zkQueue(l.c, l.clients)
	if err != nil {
		return false, 0, err
	}
	return len(q) > 0 && q[0][0] == l.me && q[0][1] == l.seq, created, nil
}

// release deletes the client's node: false when it had none left, or
// when the delete got no answer (its connection closed: a delete lost on
// its way, or its reply, or the session's end). The node's path is kept
// unless the delete succeeded or found no node or an expired session, so
// that a release sent again (release-fail=retry) deletes it, or finds it
// gone.
func (l *zkLock) release(ctx context.Context) (bool, error) {
	if l.path == "" {
		return false, nil
	}
	err := l.c.Delete(l.path, -1)
	if err == nil || errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrSessionExpired) {
		l.path = ""
	}
	if errors.Is(err, zk.ErrNoNode) || sessionLost(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ZooKeeper delete: %v", err)
	}
	return true, nil
}

// zkBack waits, up to bound, until the client's session is connected
// again after its connection was cut (go-zookeeper reconnects by
// itself), so that what its old connection carried is the server's past.
func zkBack(ctx context.Context, c *zk.Conn, bound time.Duration) {
	deadline := time.Now().Add(bound)
	for c.State() != zk.StateHasSession && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
}

// sessionLost is an error of a request queued while the client's session
// expired: its ephemeral node is gone with it.
func sessionLost(err error) bool {
	return errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrConnectionClosed)
}

// zkObserver looks at the queue with a session of its own.
type zkObserver struct {
	c       *zk.Conn
	clients int
	byData  bool // a user's client's nodes: whose each is, is in its data
}

func (o *zkObserver) holder(ctx context.Context) (int, error) {
	h, _, err := o.look(ctx)
	return h, err
}

func (o *zkObserver) look(ctx context.Context) (int, int64, error) {
	queue := zkQueue
	if o.byData {
		queue = zkUserQueue
	}
	q, err := queue(o.c, o.clients)
	if err != nil {
		return 0, 0, fmt.Errorf("observer: %v", err)
	}
	if len(q) == 0 {
		return HolderNone, -2, nil
	}
	return q[0][0], -1, nil // a node has no TTL: it lives with its session
}

// zkOK reports whether a ZooKeeper design can be played.
func zkOK(d *model.Design) error {
	if d.Check != model.CheckTrust || d.RenewTicks > 0 || d.Bug != model.BugNone || d.Delays > 0 {
		return fmt.Errorf("design %s: ZooKeeper is played for real with check=trust, renew=0, delays=0 and no planted bug", d.Name())
	}
	return nil
}

// zkSession is a client's session timeout: the design's session ticks
// less half a tick (requests are made in a tick's first half, so the
// session runs out between two ticks' requests).
func zkSession(d *model.Design, tick time.Duration) time.Duration {
	return TTL(d.SessionTicks, tick)
}
