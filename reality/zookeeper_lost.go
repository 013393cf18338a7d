package reality

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"lockcheck/model"
)

// A ZooKeeper create whose reply is lost (lose=reply, lose-at=acquire;
// model: fault_network.go, lose, and lock_zookeeper.go, zkLost), played
// with lockcheck's own client (and go-zookeeper's recipe, protect=yes:
// zkUserConn.loseCreate below): its proxy forwards the create, drops the
// server's reply and closes the connection, so the node is made (owned by
// the client's session) while the client's Create returns
// zk.ErrConnectionClosed; go-zookeeper reconnects at once within the same
// session, which lives on. The client then goes on as the model's does:
// it sends its acquire again after its timeout, and what that does is the
// design's protect=:
//
//   - protect=yes is protected mode as go-zookeeper v1.0.4 has it
//     (conn.go, Conn.CreateProtectedEphemeralSequential): the node's name
//     is "_c_" (protectedPrefix), a random 16-byte GUID in hex, "-", then
//     the recipe's name (here the client's letter and "-"), and after
//     ErrConnectionClosed it lists the parent's children and takes the one
//     whose name carries its GUID. go-zookeeper does that inside the one
//     call, at once; lockcheck's client does it at its resend, the
//     model's step for it (the lookup is the same: the session, alive,
//     still owns the node, so it is found either way).
//   - protect=no creates again: a second node, while the first stays with
//     the session, the lowest, unknown to its client, and everyone waits
//     behind it (✗ progress).
//
// The play checks what the server did, on the observer's own session: the
// proxy dropped a reply, the Create failed with a connection loss, and a
// node owned by the client's session (its Stat's EphemeralOwner) that the
// client does not know of is there. The conductor counts a client whose
// session owns the lowest node and does not know of it (forgetsNode) as
// the model's forgotten holder.

// zkProtectedPrefix is go-zookeeper's protectedPrefix (conn.go).
const zkProtectedPrefix = "_c_"

// zkUnprotected is a node's name without a protected-mode prefix
// ("_c_<32 hex digits>-").
func zkUnprotected(name string) string {
	const n = len(zkProtectedPrefix) + 32
	if strings.HasPrefix(name, zkProtectedPrefix) && len(name) > n && name[n] == '-' {
		return name[n+1:]
	}
	return name
}

// lostCreatePlayed reports whether the design's lost replies or requests
// are played for real: ZooKeeper creates (lock=zookeeper,
// lose-at=acquire) whose reply the client's proxy drops, the connection
// cut (lose=reply, zkLockConn.loseCreate), or whose request it drops
// (lose=request, zkLockConn.loseCreateRequest), with protect=yes or no.
func lostCreatePlayed(d *model.Design) bool {
	return d.Lock == model.LockZooKeeper && d.Losses > 0 && d.LoseAt == model.PlaceAcquire && d.Delays == 0
}

// zkLostPlant is the planted bugs of a lost create's play.
type zkLostPlant struct {
	keepReply   bool // the proxy lets the create's reply through: nothing is lost
	flipProtect bool // the resend does what the other protect= does
	// keepRequest: the proxy forwards the create it was to drop (and
	// keeps the connection): nothing is lost
	keepRequest bool
	// leakRequest: the proxy forwards the create it was to drop, then
	// cuts the connection as a drop does: the create is applied, its
	// reply lost (netHold.leakDrop)
	leakRequest bool
}

// newGUID is a fresh GUID for a protected create, "" without protected
// mode (as CreateProtectedEphemeralSequential makes it: 16 random bytes,
// in hex).
func (l *zkLock) newGUID() string {
	if !l.protect {
		return ""
	}
	var g [16]byte
	if _, err := rand.Read(g[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return fmt.Sprintf("%x", g)
}

// nodeName is the path the client creates its node with: its letter and
// "-", behind the protected-mode prefix when guid is not "".
func (l *zkLock) nodeName(guid string) string {
	name := model.ClientName(l.me) + "-"
	if guid != "" {
		name = zkProtectedPrefix + guid + "-" + name
	}
	return zkDir + "/" + name
}

// take makes node p (a full path) the client's own.
func (l *zkLock) take(p string) error {
	_, seq, _ := strings.Cut(zkUnprotected(p[len(zkDir)+1:]), "-")
	n, err := fmt.Sscanf(seq, "%d", &l.seq)
	if err != nil || n != 1 || len(seq) != 10 {
		return fmt.Errorf("ZooKeeper create: node %q", p)
	}
	l.path, l.lost, l.lostNode = p, "", ""
	return nil
}

// findLost is the resend after a lost create in protected mode:
// CreateProtectedEphemeralSequential's ErrConnectionClosed case, the
// parent's children searched for the GUID. Not found (the session
// expired since, and the node with it), the client creates anew.
func (l *zkLock) findLost() error {
	kids, _, err := l.c.Children(zkDir)
	if err != nil {
		return fmt.Errorf("ZooKeeper children of %s: %v", zkDir, err)
	}
	for _, k := range kids {
		p := zkDir + "/" + k
		if l.lost != "" && strings.HasPrefix(k, zkProtectedPrefix+l.lost+"-") || p == l.lostNode {
			return l.take(p)
		}
	}
	l.lost, l.lostNode = "", ""
	return nil
}

// loseCreate is client c's acquire whose reply is lost (see above).
func (l *zkLockConn) loseCreate(ctx context.Context, c *client, ob *Obs, now uint8) error {
	z, who := l.zk, model.ClientName(c.i)
	if z.path != "" {
		return fmt.Errorf("client %s: a lost reply of an acquire that creates no node (its node %s is there) is not played for real", who, z.path)
	}
	guid := z.newGUID()
	if !l.plant.keepReply {
		if err := c.net.dropReplies(l.up); err != nil {
			return err
		}
	}
	_, cerr := z.c.Create(z.nodeName(guid), nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	c.net.stopDrops()
	if !c.net.droppedReply(l.up) {
		return fmt.Errorf("client %s: its create got a reply, which its proxy was to drop (Create → %v)", who, cerr)
	}
	if !errors.Is(cerr, zk.ErrConnectionClosed) {
		return fmt.Errorf("client %s: its create's reply was dropped and its connection cut, and Create said %v, not a connection loss", who, cerr)
	}
	z.lostOnce = true
	names, node, seq, err := l.unknownNode()
	if err != nil {
		return err
	}
	if node == "" {
		return fmt.Errorf("client %s: the create whose reply was dropped left no node of its session: it was not applied", who)
	}
	z.lost = guid
	if l.plant.flipProtect {
		if z.protect {
			z.lost = ""
		} else {
			z.lostNode = node
		}
	}
	ob.Token = seq
	wonReply(l.d, zkDir+"/"+names[0] == node, 0, ob) // the lowest: what the server did holds the lock
	ob.Told = "Create → " + errText(cerr) + " (its reply dropped, the connection cut); the server made " + node[len(zkDir)+1:]
	c.m.LoseRequest(c.d, model.ActAcquire, now)
	return nil
}

// A ZooKeeper create lost on its way to the server (lose=request,
// lose-at=acquire; model: fault_network.go, lose, whose lost request
// applies nothing), played with lockcheck's own client: its proxy drops
// the create's request (a ping before it goes through: zkEvents) and
// closes the connection, so the create never reaches the server and the
// client's Create returns zk.ErrConnectionClosed (go-zookeeper's loop
// flushes the requests it sent on the closed connection with it, conn.go,
// Conn.loop and flushRequests); go-zookeeper reconnects within the same
// session. The client then goes on as the model's does
// (model.Client.LoseRequest): it sends its acquire again after its
// timeout. With protect=yes it first lists the children for the lost
// create's GUID, as CreateProtectedEphemeralSequential does on
// ErrConnectionClosed, and finds none (findLost), then creates; with
// protect=no it creates. Either way the resend's node is the only one
// of its session: a lost request, unlike a lost reply, leaves no node to
// forget, and its sequence number is the next (no create consumed one).
//
// The play checks what the server did, on the observer's own session,
// once the client's session is back: the proxy dropped a request, the
// Create failed with a connection loss, and no node is owned by the
// client's session (its Stat's EphemeralOwner). go-zookeeper's recipe is
// refused for it (CheckClient): its Lock sends the create again at once,
// inside the call, not after the design's timeout.

// loseCreateRequest is client c's acquire lost on its way (see above).
func (l *zkLockConn) loseCreateRequest(ctx context.Context, c *client, ob *Obs, now uint8) error {
	z, who := l.zk, model.ClientName(c.i)
	if z.path != "" {
		return fmt.Errorf("client %s: a lost request of an acquire that creates no node (its node %s is there) is not played for real", who, z.path)
	}
	guid := z.newGUID()
	if !l.plant.keepRequest {
		if err := c.net.dropRequests(l.up); err != nil {
			return err
		}
	}
	_, cerr := z.c.Create(z.nodeName(guid), nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	c.net.stopDrops()
	if !c.net.dropped(l.up) {
		return fmt.Errorf("client %s: its create reached the server, which its proxy was to drop (Create → %v)", who, cerr)
	}
	if !errors.Is(cerr, zk.ErrConnectionClosed) {
		return fmt.Errorf("client %s: its create was dropped on its way and its connection cut, and Create said %v, not a connection loss", who, cerr)
	}
	z.lostOnce = true // a node of its session it does not know of would hold the lock for no one (forgetsNode)
	zkBack(ctx, z.c, c.clk.tick/4)
	if _, err := l.obsC.Sync(zkDir); err != nil {
		return fmt.Errorf("observer: ZooKeeper sync %s: %v", zkDir, err)
	}
	names, _, err := zkNodes(l.obsC)
	if err != nil {
		return err
	}
	for _, k := range names {
		mine, err := l.unknownMine(k)
		if err != nil {
			return err
		}
		if mine {
			return fmt.Errorf("client %s: the create whose request was dropped made node %s of its session: it reached the server", who, k)
		}
	}
	z.lost = guid // protect=yes: the resend looks for it first (findLost), and finds none
	ob.Result = model.ResNoop
	ob.Told = "Create → " + errText(cerr) + " (its request dropped, the connection cut); the server made no node"
	c.m.LoseRequest(c.d, model.ActAcquire, now)
	return nil
}

// zkNodes is the children of zkDir that are clients' nodes (no fillers),
// in sequence order, with their sequences.
func zkNodes(c *zk.Conn) ([]string, []int, error) {
	kids, _, err := c.Children(zkDir)
	if err != nil {
		return nil, nil, fmt.Errorf("observer: ZooKeeper children of %s: %v", zkDir, err)
	}
	var names []string
	var seqs []int
	for _, k := range kids {
		if seq, ok := zkSeq(k); ok && !strings.HasPrefix(k, "filler-") {
			names, seqs = append(names, k), append(seqs, seq)
		}
	}
	sort.Sort(bySeq{names, seqs})
	return names, seqs, nil
}

type bySeq struct {
	names []string
	seqs  []int
}

func (b bySeq) Len() int           { return len(b.seqs) }
func (b bySeq) Less(i, j int) bool { return b.seqs[i] < b.seqs[j] }
func (b bySeq) Swap(i, j int) {
	b.names[i], b.names[j] = b.names[j], b.names[i]
	b.seqs[i], b.seqs[j] = b.seqs[j], b.seqs[i]
}

// unknownNode is the newest node owned by the client's session that the
// client does not know of, and its sequence ("" when there is none),
// with the names of all the clients' nodes, in sequence order.
func (l *zkLockConn) unknownNode() ([]string, string, int, error) {
	names, seqs, err := zkNodes(l.obsC)
	if err != nil {
		return nil, "", 0, err
	}
	for k := len(names) - 1; k >= 0; k-- {
		if mine, err := l.unknownMine(names[k]); err != nil || mine {
			return names, zkDir + "/" + names[k], seqs[k], err
		}
	}
	return names, "", 0, nil
}

// unknownMine reports whether node k (a child of zkDir) is owned by the
// client's session and unknown to the client.
func (l *zkLockConn) unknownMine(k string) (bool, error) {
	z, p := l.zk, zkDir+"/"+k
	if p == z.path || p == z.lostNode || z.lost != "" && strings.HasPrefix(k, zkProtectedPrefix+z.lost+"-") {
		return false, nil
	}
	ok, st, err := l.obsC.Exists(p)
	if err != nil {
		return false, fmt.Errorf("observer: ZooKeeper exists %s: %v", p, err)
	}
	return ok && st.EphemeralOwner == z.c.SessionID(), nil
}

// forgetsNode reports whether the lowest node is owned by the client's
// session, alive, and unknown to the client (model: zkOrphanHeld): it
// holds the lock for no one.
func (l *zkLockConn) forgetsNode(context.Context) (bool, error) {
	if !l.zk.lostOnce { // every node of its session's is one it created and heard of
		return false, nil
	}
	names, _, err := zkNodes(l.obsC)
	if err != nil || len(names) == 0 {
		return false, err
	}
	return l.unknownMine(names[0])
}

// nodeForgetter is a lock whose server can keep a node of the client's
// session that the client does not know of (zkLockConn).
type nodeForgetter interface {
	forgetsNode(context.Context) (bool, error)
}

// createLoser is a lock whose acquire's reply is lost for real
// (zkLockConn.loseCreate).
type createLoser interface {
	loseCreate(ctx context.Context, c *client, ob *Obs, now uint8) error
}

// createRequestLoser is a lock whose acquire is lost on its way for real
// (zkLockConn.loseCreateRequest).
type createRequestLoser interface {
	loseCreateRequest(ctx context.Context, c *client, ob *Obs, now uint8) error
}

// zkEvents is the length of the whole ZooKeeper frames at the start of b
// that answer no request of the client's: a ping's reply (xid -2) or a
// watch's event (xid -1); a request's reply has the request's xid, ≥ 0
// (each frame: a 4-byte length, then the reply header, whose first field
// is the xid; go-zookeeper's recvLoop, conn.go). A drop of replies lets
// them through and drops the request's reply.
func zkEvents(b []byte) int {
	at := 0
	for len(b)-at >= 8 {
		n := int(binary.BigEndian.Uint32(b[at:]))
		xid := int32(binary.BigEndian.Uint32(b[at+4:]))
		if xid >= 0 || n < 4 || len(b)-at < 4+n {
			break
		}
		at += 4 + n
	}
	return at
}

// loseCreate is go-zookeeper's recipe (ClientZkLock, zookeeper_lib.go)
// losing its create's reply: the step starts LockWithData with the
// proxy set to drop the server's first reply to a request, which is the
// create's (CreateProtectedEphemeralSequential's Create is the call's
// first request), and says what the server did once the reply is
// dropped. The call goes on by itself: on ErrConnectionClosed it lists
// the children after the reconnect, finds its node by the GUID and, its
// node the lowest, returns; or it watches its predecessor. Its caller
// hears of it at its next acquire step, the model's resend, as it hears
// of a Lock that waited (zkUserConn.acquire).
func (l *zkUserConn) loseCreate(ctx context.Context, c *client, ob *Obs, now uint8) error {
	who, up := model.ClientName(c.i), l.w.addr
	if l.pending != nil {
		return fmt.Errorf("client %s: a lost reply of an acquire whose Lock is running already is not played for real", who)
	}
	if !l.w.opts.plant.zkLost.keepReply {
		if err := c.net.dropReplies(up); err != nil {
			return err
		}
	}
	done := make(chan zkAnswer, 1)
	l.pending = done
	u, run := l.user, l.run
	go func() {
		won, _, told, err := u.acquire(run)
		done <- zkAnswer{won, told, err}
	}()
	deadline := time.Now().Add(zkUserBound)
	for !c.net.droppedReply(up) {
		if time.Now().After(deadline) {
			c.net.stopDrops()
			return fmt.Errorf("client %s: its create got a reply, which its proxy was to drop (or the recipe sent none within %v)", who, zkUserBound)
		}
		select {
		case <-ctx.Done():
			c.net.stopDrops()
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	c.net.stopDrops()
	there, first, seq, err := l.mine()
	if err != nil {
		return err
	}
	if !there {
		return fmt.Errorf("client %s: the request whose reply was dropped, Acquire's first, made no node with the data %q: a lost create's reply is the reply to the first request, which must be the create (as go-zookeeper's LockWithData's is)", who, model.LockValue(c.i))
	}
	tok := l.w.seen.token(l.d, seq)
	ob.Token = tok
	wonReply(l.d, first, 0, ob)
	ob.Told = "LockWithData running: its create's reply dropped, the connection cut"
	c.m.LoseRequest(c.d, model.ActAcquire, now)
	return nil
}
