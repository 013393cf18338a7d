package reality

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"lockcheck/model"
)

// EtcdLockKey is the etcd lock's key, as the model's story names it.
const EtcdLockKey = "lock/order-42"

// etcdFillerKey is written before a run to bring the revision up to the
// design's first token.
const etcdFillerKey = "lockcheck/filler"

// EtcdTick is the default tick of etcd runs, and every etcd tick is a
// multiple of it. A lease's TTL is whole seconds (TTL·tick − tick/2 must
// be), and etcd revokes expired leases from a loop that runs every 500ms,
// so an expiry lands up to half a second after its time: the tick's second
// half must hold that lag on top of the half-tick offset.
const EtcdTick = 2 * time.Second

// etcdLag is how late etcd may revoke an expired lease (its lessor checks
// every 500ms), plus slack for the revoke itself.
const etcdLag = 600 * time.Millisecond

// EtcdServer is an etcd member embedded in this process, on free loopback
// ports, with a short heartbeat so that one-second leases are allowed.
type EtcdServer struct {
	e   *embed.Etcd
	dir string
	url string
}

// StartEtcd starts an embedded single-member etcd on 127.0.0.1 and waits
// until it serves (bounded by ctx and 20 seconds). It tries a few port
// pairs in case another process takes a free port first.
func StartEtcd(ctx context.Context) (*EtcdServer, error) {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var s *EtcdServer
		if s, err = startEtcdOnce(ctx); err == nil {
			return s, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, err
}

func startEtcdOnce(ctx context.Context) (*EtcdServer, error) {
	dir, err := serverDir("etcd")
	if err != nil {
		return nil, err
	}
	cport, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	pport, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	curl, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(cport))
	purl, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(pport))
	cfg := embed.NewConfig()
	cfg.Name = "lockcheck"
	cfg.Dir = dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*curl}, []url.URL{*curl}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*purl}, []url.URL{*purl}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// minimum lease TTL = 1.5 election ticks × heartbeat: 150ms, so a
	// one-second lease stays one second
	cfg.TickMs, cfg.ElectionMs = 10, 100
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{"stderr"}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start embedded etcd: %v", err)
	}
	s := &EtcdServer{e: e, dir: dir, url: curl.String()}
	select {
	case <-e.Server.ReadyNotify():
		return s, nil
	case err := <-e.Err():
		s.Stop()
		return nil, fmt.Errorf("embedded etcd: %v", err)
	case <-ctx.Done():
		s.Stop()
		return nil, fmt.Errorf("embedded etcd not ready: %v", ctx.Err())
	case <-time.After(20 * time.Second):
		s.Stop()
		return nil, errors.New("embedded etcd not ready within 20s")
	}
}

// Endpoint is the client URL.
func (s *EtcdServer) Endpoint() string { return s.url }

// Stop closes the member and removes its data.
func (s *EtcdServer) Stop() {
	s.e.Close()
	os.RemoveAll(s.dir)
}

func newEtcdClient(endpoint string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
}

// etcdLock is one client's side of the etcd lock: a lease per attempt and
// a transaction that puts the key only if it does not exist
// (create_revision = 0); the put's revision is the fencing token.
type etcdLock struct {
	cli    *clientv3.Client
	value  string
	ttl    int64            // lease TTL, seconds
	lease  clientv3.LeaseID // the lease of its last successful put
	offset int64            // revision − offset = the model's token
}

// acquire grants a lease and puts the key with it if absent. A refused
// attempt revokes its unused lease.
func (l *etcdLock) acquire(ctx context.Context) (bool, int, error) {
	g, err := l.cli.Grant(ctx, l.ttl)
	if err != nil {
		return false, 0, fmt.Errorf("etcd lease grant: %v", err)
	}
	resp, err := l.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(EtcdLockKey), "=", 0)).
		Then(clientv3.OpPut(EtcdLockKey, l.value, clientv3.WithLease(g.ID))).
		Commit()
	if err != nil {
		return false, 0, fmt.Errorf("etcd txn put-if-absent: %v", err)
	}
	if !resp.Succeeded {
		if _, err := l.cli.Revoke(ctx, g.ID); err != nil {
			return false, 0, fmt.Errorf("etcd revoke unused lease: %v", err)
		}
		return false, 0, nil
	}
	l.lease = g.ID
	return true, int(resp.Header.Revision - l.offset), nil
}

// release deletes the key if it is still ours (a compare on its value).
func (l *etcdLock) release(ctx context.Context) (bool, error) {
	resp, err := l.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.Value(EtcdLockKey), "=", l.value)).
		Then(clientv3.OpDelete(EtcdLockKey)).
		Commit()
	if err != nil {
		return false, fmt.Errorf("etcd txn delete-if-ours: %v", err)
	}
	return resp.Succeeded, nil
}

// renew is one keep-alive of its lease: false when the lease is gone.
func (l *etcdLock) renew(ctx context.Context) (bool, error) {
	if l.lease == 0 {
		return false, nil
	}
	_, err := l.cli.KeepAliveOnce(ctx, l.lease)
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("etcd keep-alive: %v", err)
	}
	return true, nil
}

// etcdObserver looks at the etcd lock key.
type etcdObserver struct {
	cli     *clientv3.Client
	clients int
}

func (o *etcdObserver) holder(ctx context.Context) (int, error) {
	h, _, err := o.lookKey(ctx, false)
	return h, err
}

// look is the holder and the key's remaining lease time in ms (-1: no
// lease, -2: no key).
func (o *etcdObserver) look(ctx context.Context) (int, int64, error) {
	return o.lookKey(ctx, true)
}

func (o *etcdObserver) lookKey(ctx context.Context, ttl bool) (int, int64, error) {
	resp, err := o.cli.Get(ctx, EtcdLockKey)
	if err != nil {
		return 0, 0, fmt.Errorf("observer: etcd get %s: %v", EtcdLockKey, err)
	}
	if len(resp.Kvs) == 0 {
		return HolderNone, -2, nil
	}
	kv := resp.Kvs[0]
	h := holderOf(string(kv.Value), nil, o.clients)
	if !ttl {
		return h, 0, nil
	}
	if kv.Lease == 0 {
		return h, -1, nil
	}
	tl, err := o.cli.TimeToLive(ctx, clientv3.LeaseID(kv.Lease))
	if err != nil {
		return 0, 0, fmt.Errorf("observer: etcd lease time-to-live: %v", err)
	}
	return h, tl.TTL * 1000, nil
}

// etcdSetup deletes the lock key and brings the revision up to the
// design's first token less one when it is below; it returns the offset
// between etcd's revisions and the model's tokens (0 when they match; a
// fresh etcd starts at revision 1, so token=1 designs have offset 1).
func etcdSetup(ctx context.Context, cli *clientv3.Client, d *model.Design) (int64, error) {
	resp, err := cli.Delete(ctx, EtcdLockKey)
	if err != nil {
		return 0, fmt.Errorf("etcd: reset %s: %v", EtcdLockKey, err)
	}
	rev := resp.Header.Revision
	want := int64(d.FirstToken - 1)
	for ; rev < want; rev++ {
		if _, err := cli.Put(ctx, etcdFillerKey, strconv.FormatInt(rev+1, 10)); err != nil {
			return 0, fmt.Errorf("etcd: filler put: %v", err)
		}
	}
	return rev - want, nil
}
