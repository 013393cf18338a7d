package reality

import (
	"bytes"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"lockcheck/model"
)

// TestZKReleaseKeepsNodeOnConnectionLoss: a delete lost on its way (the
// proxy drops it and cuts the connection) leaves the client its node's
// path, so that a release sent again deletes the node; clearing it with
// the failed call left the node to the session while the resend said
// "no node".
func TestZKReleaseKeepsNodeOnConnectionLoss(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	zs, obs, h, l := zkHolding(t, ctx)
	zc := l.c
	node := l.path
	if err := h.dropRequests(zs.Addr()); err != nil {
		t.Fatal(err)
	}
	ok, err := l.release(ctx)
	h.stopDrops()
	if !h.dropped(zs.Addr()) || ok || err != nil {
		t.Fatalf("the dropped delete: dropped %v, release → %v, %v; want dropped, false, nil", h.dropped(zs.Addr()), ok, err)
	}
	if there, _, err := obs.Exists(node); err != nil || !there {
		t.Fatalf("the node after a dropped delete: exists %v (%v), want it there", there, err)
	}
	if l.path != node {
		t.Fatalf("the failed delete left path %q, want %q kept for the resend", l.path, node)
	}
	zkBack(ctx, zc, 5*time.Second)
	if ok, err := l.release(ctx); !ok || err != nil {
		t.Fatalf("the resent release: %v, %v; want the node deleted", ok, err)
	}
	if there, _, err := obs.Exists(node); err != nil || there {
		t.Fatalf("the node after the resent release: exists %v (%v), want it gone", there, err)
	}
	if l.path != "" {
		t.Fatalf("after the delete: path %q, want none", l.path)
	}
}

// zkHolding is lockcheck's own ZooKeeper lock of one client, through a
// proxy of its own (h) that holds its pings as a pause does, holding the
// lock node; obs is an observer's session. All are closed when the test
// ends.
func zkHolding(t *testing.T, ctx context.Context) (*ZooKeeperServer, *zk.Conn, *netHold, *zkLock) {
	t.Helper()
	zs := needZooKeeper(t)
	obs, err := zkConnect(ctx, zs.Addr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(obs.Close)
	d, _ := model.ParseDesign("zookeeper/cad/none/plain,clients=1")
	if err := zkSetup(ctx, obs, &d, false); err != nil {
		t.Fatal(err)
	}
	h := &netHold{}
	t.Cleanup(h.close)
	via, err := h.via(zs.Addr())
	if err != nil {
		t.Fatal(err)
	}
	h.pingOnHold(zs.Addr())
	zc, err := zkConnect(ctx, via, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	l := &zkLock{c: zc, me: 0, clients: 1}
	if won, _, err := l.acquire(ctx); err != nil || !won {
		t.Fatalf("acquire: won %v, %v", won, err)
	}
	return zs, obs, h, l
}

// TestZKDropForwardsPings: a drop of requests to ZooKeeper lets a ping
// (xid -2) at the head of what the client sent through and drops the
// request behind it, closing the connection; the next connection (the
// client's reconnect, its session's handshake) goes through.
func TestZKDropForwardsPings(t *testing.T) {
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	got := make(chan []byte, 2)
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				b, _ := io.ReadAll(c)
				got <- b
			}(c)
		}
	}()
	var h netHold
	defer h.close()
	via, err := h.via(up.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	h.pingOnHold(up.Addr().String())
	create := []byte{0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 15} // xid 1, opcode 15 (a create's header)
	c, err := net.Dial("tcp", via)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := h.dropRequests(up.Addr().String()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(append(append([]byte{}, zkPingPacket...), create...)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the connection of a dropped request is still open")
	}
	if b := <-got; !bytes.Equal(b, zkPingPacket) {
		t.Fatalf("the server got %v, want the ping %v only", b, zkPingPacket)
	}
	if !h.dropped(up.Addr().String()) {
		t.Fatal("the create was not dropped")
	}
	c2, err := net.Dial("tcp", via) // the reconnect, before stopDrops
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Write(create); err != nil {
		t.Fatal(err)
	}
	c2.Close()
	if b := <-got; !bytes.Equal(b, create) {
		t.Fatalf("the reconnect's first frame: the server got %v, want %v", b, create)
	}
}

// TestZKAcquireKeepsNodeOnConnectionLoss: an acquire whose look at its
// own node (Exists) is lost with the connection, the session alive,
// keeps the node: it asks again once reconnected, and does not create a
// second node behind its first, which would hold the lock for no one.
func TestZKAcquireKeepsNodeOnConnectionLoss(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	zs, obs, h, l := zkHolding(t, ctx)
	zc := l.c
	node, sid := l.path, zc.SessionID()
	if err := h.dropRequests(zs.Addr()); err != nil {
		t.Fatal(err)
	}
	won, created, err := l.acquire(ctx)
	h.stopDrops()
	if !h.dropped(zs.Addr()) {
		t.Fatal("the proxy dropped no request")
	}
	if err != nil || !won || created != 0 || l.path != node {
		t.Fatalf("the acquire whose Exists was dropped: won %v, created %d, path %q (%v); want it still holding %s, nothing created", won, created, l.path, err, node)
	}
	if zc.SessionID() != sid {
		t.Fatalf("the session changed (%x → %x): the drop was to cut the connection only", sid, zc.SessionID())
	}
	kids, _, err := obs.Children(zkDir)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(kids); n != 1 {
		t.Fatalf("%d nodes under %s (%v), want the one", n, zkDir, kids)
	}
}
