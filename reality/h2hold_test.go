package reality

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdDBs serializes the tests that share databases 14 and 15 (the
// library table has 0 to 11, TestPausedLibraryIsFrozen 12 and 13).
var etcdDBs sync.Mutex

// TestEtcdHeldAcquireReply plays an acquire whose reply the network holds
// on an etcd lease lock (reality/testdata/etcd-acquire-reply.txt): the
// client's HTTP/2 proxy holds the frames of the acquire's Txn stream
// until the arrive step. lockcheck's own client must agree with the
// model step by step and lose the update for real. With the hold leaking
// (planted: the proxy lets the reply through at once and says it holds
// it), the run must fail at the arrive step, where the reply is found to
// have come back already. etcd's Mutex plays the session-reply story
// (watchdog=session): its Session keeps the lease, and the key, alive
// while the reply is held for a whole TTL, and the late reply finds the
// key still B's.
func TestEtcdHeldAcquireReply(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: three etcd runs of 8s to 16s (2s ticks)")
	}
	t.Parallel() // mostly sleep
	etcdDBs.Lock()
	defer etcdDBs.Unlock()
	in := etcdInput(t, "testdata/etcd-acquire-reply.txt")
	c := reproduce(t, in, Options{LockDB: 14, StoreDB: 15})
	if !c.Agree || !c.Real.LostUpdate || len(c.Real.Unsafe) == 0 {
		t.Fatalf("want agreement and a lost update with ✗ on real etcd, the acquire's reply held:\n%s", c.Text())
	}

	s := needServer(t)
	opts := Options{Addr: s.Addr(), Etcd: needEtcd(t).Endpoint(), Tick: EtcdTick, LockDB: 14, StoreDB: 15}
	opts.plant.leakReply = true
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := Reproduce(ctx, in, "redis-server "+s.Version(), opts)
	want := "step 13 (B arrive at t=4): client B: its held acquire reply came back before its arrive step: the proxy did not hold it"
	if err == nil || err.Error() != want {
		t.Fatalf("a proxy that leaks the held reply: want the error %q, got %v", want, err)
	}

	// etcd's Mutex, the reply held for a whole TTL (the session-reply
	// story): its Session renews the key while the reply is held (the
	// keep-alive stream passes the held Txn), as watchdog=session says
	mutex, how, err := ForClient(storyInput(t, "session-reply"), ClientEtcdMutex)
	if err != nil || how != "" {
		t.Fatalf("session-reply: want it played as it is for etcd-mutex, got how %q, %v", how, err)
	}
	c = reproduce(t, mutex, Options{Client: ClientEtcdMutex, LockDB: 14, StoreDB: 15})
	if !c.Agree || c.Real.LostUpdate || len(c.Real.Unsafe) > 0 {
		t.Fatalf("etcd-mutex with its acquire reply held for a whole TTL: want agreement and no lost update, the Session renewing the key:\n%s", c.Text())
	}
}

// TestH2HoldOneStream tests the HTTP/2 hold itself on a real etcd: with
// the replies held, the first Txn's reply waits while a Get and a lease
// keep-alive on the same connection are answered; the Txn's reply comes
// once the hold ends, and the connection goes on. With the byte-wise hold
// of a Redis proxy (planted: h2 off), the Get is held too.
func TestH2HoldOneStream(t *testing.T) {
	e := needEtcd(t)
	for _, frames := range []bool{true, false} {
		held, err := h2HoldOnce(e.Endpoint(), frames)
		if frames && err != nil {
			t.Fatalf("frame by frame: %v", err)
		}
		if !frames && (err == nil || !strings.Contains(err.Error(), "Get held")) {
			t.Fatalf("a hold of every reply (not frame by frame) went unnoticed: want the Get held, got %v", err)
		}
		if frames && held != "txn held, get and keep-alive answered, txn answered on resume" {
			t.Fatalf("frame by frame: %s", held)
		}
	}
}

// h2HoldOnce runs a Txn with the replies held and a Get and a keep-alive
// beside it, through one proxy (frames: HTTP/2 aware), and says what
// happened.
func h2HoldOnce(endpoint string, frames bool) (string, error) {
	h := &netHold{}
	defer h.close()
	var via string
	var err error
	if frames {
		via, err = viaURL(h, endpoint)
	} else {
		host := strings.TrimPrefix(endpoint, "http://")
		if via, err = h.via(host); err == nil {
			via = "http://" + via
		}
	}
	if err != nil {
		return "", err
	}
	cli, err := newEtcdClient(via)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g, err := cli.Grant(ctx, 5)
	if err != nil {
		return "", err
	}
	up := strings.TrimPrefix(endpoint, "http://")
	if err := h.holdReplies(up); err != nil {
		return "", err
	}
	txn := make(chan error, 1)
	go func() {
		_, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision("h2hold/test"), "=", 0)).
			Then(clientv3.OpPut("h2hold/test", "x", clientv3.WithLease(g.ID))).Commit()
		txn <- err
	}()
	if !h.replyHeld(up, ctx.Done()) {
		return "", ctx.Err()
	}
	short, stop := context.WithTimeout(ctx, 2*time.Second)
	defer stop()
	if _, err := cli.Get(short, "h2hold/test"); err != nil {
		h.resumeReplies()
		return "", fmt.Errorf("Get held with the Txn's reply: %v", err)
	}
	if _, err := cli.KeepAliveOnce(short, g.ID); err != nil {
		h.resumeReplies()
		return "", fmt.Errorf("keep-alive held with the Txn's reply: %v", err)
	}
	select {
	case err := <-txn:
		return "", fmt.Errorf("the Txn's reply came while held (%v)", err)
	default:
	}
	h.resumeReplies()
	if err := <-txn; err != nil {
		return "", err
	}
	if _, err := cli.Delete(ctx, "h2hold/test"); err != nil {
		return "", err
	}
	return "txn held, get and keep-alive answered, txn answered on resume", nil
}
