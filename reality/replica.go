package reality

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// A replica design (lock=replica) is played on two redis-servers of the
// run's own: a primary and a replica that follows it with real Redis
// replication (REPLICAOF), its replication link passing through a
// loopback proxy that holds it. The replica lags until the schedule's
// replicate step, which lets the stream through until the replica's
// offset reaches the primary's, then holds it again; a failover step
// drops what the link held, kills the primary (SIGKILL), promotes the
// replica (REPLICAOF NO ONE) and points every client's proxy at it.
type replicaPair struct {
	primary, replica *Server
	link             *proxy
	pc, rc           *redis.Client
}

// startReplica starts the pair and waits until the replica has synced.
func startReplica(ctx context.Context) (*replicaPair, error) {
	bin, err := FindServer()
	if err != nil {
		return nil, err
	}
	rp := &replicaPair{}
	if rp.primary, err = StartServer(ctx, bin); err != nil {
		return nil, fmt.Errorf("replica design: primary: %v", err)
	}
	if rp.replica, err = StartServer(ctx, bin); err != nil {
		rp.stop()
		return nil, fmt.Errorf("replica design: replica: %v", err)
	}
	if rp.link, err = newProxy(rp.primary.Addr()); err != nil {
		rp.stop()
		return nil, err
	}
	rp.pc = redis.NewClient(crashableOptions(rp.primary.Addr(), 0))
	rp.rc = redis.NewClient(crashableOptions(rp.replica.Addr(), 0))
	// the first sync at once (Redis 7 waits 5 s for more replicas by default)
	if err := rp.pc.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		rp.stop()
		return nil, fmt.Errorf("replica design: CONFIG SET repl-diskless-sync-delay: %v", err)
	}
	host, port, _ := strings.Cut(rp.link.addr(), ":")
	if err := rp.rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		rp.stop()
		return nil, fmt.Errorf("replica design: REPLICAOF %s: %v", rp.link.addr(), err)
	}
	if err := rp.sync(ctx); err != nil {
		rp.stop()
		return nil, err
	}
	return rp, nil
}

// offset is a server's master_repl_offset (for a replica: what it has
// received) and whether its link to its primary is up.
func replOffset(ctx context.Context, c *redis.Client) (int64, bool, error) {
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return 0, false, err
	}
	off, err := strconv.ParseInt(infoField(info, "master_repl_offset"), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("INFO replication: master_repl_offset: %v", err)
	}
	return off, infoField(info, "master_link_status") == "up", nil
}

// sync lets the replication stream through until the replica has all the
// primary has, then holds the link again (bounded: 5 s).
func (rp *replicaPair) sync(ctx context.Context) error {
	rp.link.resume()
	defer rp.link.hold()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p, _, err := replOffset(ctx, rp.pc)
		if err != nil {
			return fmt.Errorf("replica design: primary INFO: %v", err)
		}
		r, up, err := replOffset(ctx, rp.rc)
		if err != nil {
			return fmt.Errorf("replica design: replica INFO: %v", err)
		}
		if up && r >= p {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("replica design: the replica did not catch up within 5s (offset %d of %d, link up %v)", r, p, up)
		}
		time.Sleep(time.Millisecond)
	}
}

// failover drops what the link held, kills the primary and promotes the
// replica.
func (rp *replicaPair) failover(ctx context.Context) error {
	rp.link.close() // what the replica had not received is lost
	if err := rp.primary.Crash(); err != nil {
		return fmt.Errorf("failover: kill the primary: %v", err)
	}
	if err := rp.rc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("failover: REPLICAOF NO ONE: %v", err)
	}
	return nil
}

func (rp *replicaPair) stop() {
	if rp.link != nil {
		rp.link.close()
	}
	for _, c := range []*redis.Client{rp.pc, rp.rc} {
		if c != nil {
			c.Close()
		}
	}
	for _, s := range []*Server{rp.primary, rp.replica} {
		if s != nil {
			s.Stop()
		}
	}
}

// retarget points the proxies for upstream from (the shared one, and a
// user's client's lock proxy of its own) at to: connections made from now
// on go there, those open now are closed.
func (h *netHold) retarget(from, to string) {
	for _, key := range []string{from, lockProxyKey(from)} {
		p, ok := h.proxies[key]
		if !ok {
			continue
		}
		p.mu.Lock()
		p.upstream = to
		for c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
	}
}

// replicaOK reports whether a replica design can be played.
func replicaOK(d *model.Design) error {
	if d.Replicas > 1 {
		return fmt.Errorf("design %s: one replica is played for real (replicas=%d); set replicas=1", d.Name(), d.Replicas)
	}
	if d.Ack == model.AckWait {
		return fmt.Errorf("design %s: WAIT before the acquire returns (ack=wait) is not played for real yet; set ack=async", d.Name())
	}
	if d.Partitions > 0 || d.NodeCrashes > 0 {
		return fmt.Errorf("design %s: a replica design is played for real with failovers only (partitions=0, node-crashes=0)", d.Name())
	}
	return nil
}
