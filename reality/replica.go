package reality

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// A replica design (lock=replica) is played on redis-servers of the run's
// own: a primary and the design's replicas, each following it with real
// Redis replication (REPLICAOF), its replication link passing through a
// loopback proxy of its own that holds it. A replica lags until the
// schedule's replicate step names it, which lets its stream through until
// the primary has its acknowledgement of everything (a WAIT's count is
// the primary's, from the replicas' REPLCONF ACKs), then holds it again.
//
// The model keeps its replicas in order of freshness (model/lock_replica.go:
// its replica 1 is the freshest), so the set keeps which server is the
// model's replica k (order) and moves a replica that catches up to the
// front, as the model does. A failover step drops what every link held,
// kills the primary (SIGKILL), promotes the replica the model names
// (REPLICAOF NO ONE; promote=any: Sentinel's choice is the step's) and
// points every client's proxy at it; the replicas fresher than it and the
// old primary, restarted empty (it has no append-only file), follow it
// and resync in full at once, as the model takes them to (Redis refuses
// them a partial resync: their offsets are past the promoted replica's);
// the staler ones follow it through a held link and catch up at their
// next replicate step.
//
// With rejoin=K (model: retire, replicaRejoin) the killed primary stays
// dead K ticks of the play's clock: the model's replica it becomes is
// down, kept after the up ones, and played by a spare that follows
// nobody until its tick comes (nothing reaches it: no replication, no
// WAIT counts it, no failover promotes it); at that tick the spare, an
// empty redis-server as the restarted one would be, follows the primary
// and resyncs in full, and is the freshest replica. A failure with no
// replica up (the second, with replicas=1) promotes nobody: the primary's
// address stays dead, so every request to it fails as to a crashed node,
// until its tick, when a spare plays it restarted empty (persist=0) and
// the clients' proxies move to it; the down replica rejoins it then.
type replicaSet struct {
	servers []*Server       // every redis-server of the set
	admin   []*redis.Client // a direct connection to each
	links   []*proxy        // links[s]: server s's replication link to the primary (nil: none)
	primary int             // the primary's server
	order   []int           // the model's replicas 1 … N, freshest first: their servers
	spares  []int           // servers started empty, each to play an old primary back
	open    bool            // planted bug: the links are never held (plant.openLinks)
	fixed   bool            // planted bug: the order stays as it started (plant.fixedOrder)
	// rejoin=K: back[k-1] is the tick at which the model's replica k,
	// down, rejoins (0: up); a down replica's server is a spare that
	// follows nobody yet
	back []int
	// rejoin=K, a failure with no replica up: the tick at which the
	// primary restarts (0: it is up), and the spare that plays it then
	primaryBack, restarted int
}

// startReplicaSet starts a primary and n replicas, and waits until every
// replica has synced; and spares servers more, one for each failover after
// which the old primary comes back (see failover).
func startReplicaSet(ctx context.Context, n, spares int, pl plant) (*replicaSet, error) {
	bin, err := FindServer()
	if err != nil {
		return nil, err
	}
	rs := &replicaSet{open: pl.openLinks, fixed: pl.fixedOrder}
	for s := 0; s <= n+spares; s++ {
		srv, err := StartServer(ctx, bin)
		if err != nil {
			rs.stop()
			return nil, fmt.Errorf("replica design: %s: %v", rs.role(s, n), err)
		}
		rs.servers = append(rs.servers, srv)
		rs.admin = append(rs.admin, redis.NewClient(admin(crashableOptions(srv.Addr(), 0))))
		rs.links = append(rs.links, nil)
		if err := rs.configure(ctx, s); err != nil {
			rs.stop()
			return nil, err
		}
		if s > n {
			rs.spares = append(rs.spares, s)
		}
	}
	for s := 1; s <= n; s++ {
		rs.order = append(rs.order, s)
		rs.back = append(rs.back, 0)
	}
	if err := rs.resync(ctx, rs.order); err != nil {
		rs.stop()
		return nil, err
	}
	return rs, nil
}

func (rs *replicaSet) role(s, n int) string {
	switch {
	case s == 0:
		return "primary"
	case s > n:
		return "spare"
	}
	return fmt.Sprintf("replica %d", s)
}

// configure makes server s sync a replica at once when it is the primary
// (Redis 7 waits 5 s for more replicas by default), and reap the child
// that sent a snapshot within 10 ms (hz 100: its cron's rate); every
// server may be promoted.
func (rs *replicaSet) configure(ctx context.Context, s int) error {
	for _, kv := range [][2]string{{"repl-diskless-sync-delay", "0"}, {"hz", "100"}} {
		if err := rs.admin[s].ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			return fmt.Errorf("replica design: CONFIG SET %s %s on %s: %v", kv[0], kv[1], rs.servers[s].Addr(), err)
		}
	}
	return nil
}

// snapshot waits until server s, which has just asked the primary for a
// full resync, has loaded the primary's snapshot, and the primary streams
// to it (bounded: 5 s). The primary starts the stream to a replica synced
// from a snapshot sent on the socket at the replica's first REPLCONF ACK
// after it has put the replica online, which it does when it reaps the
// child that sent the snapshot (its cron); the replica sends that ACK as
// soon as it has loaded the snapshot, and an ACK that comes before the
// reaping is taken for nothing: the stream would start with the next,
// which the replica sends once a second. So the link holds the replica's
// requests from when the snapshot is on its way until the primary has
// reaped the child. (A snapshot on disk has no such wait, but the
// primary fsyncs it, which took up to half a second on a loaded machine.)
func (rs *replicaSet) snapshot(ctx context.Context, s int) error {
	deadline := time.Now().Add(5 * time.Second)
	port := rs.servers[s].Addr()[strings.LastIndexByte(rs.servers[s].Addr(), ':')+1:]
	gated := false
	defer func() {
		if gated {
			rs.links[s].setGate(false)
		}
	}()
	for step := 0; step < 3; {
		var info string
		var err error
		if step == 1 {
			info, err = rs.admin[s].Info(ctx, "replication").Result()
		} else {
			info, err = rs.admin[rs.primary].Info(ctx, "replication", "persistence").Result()
		}
		if err != nil {
			return fmt.Errorf("replica design: INFO: %v", err)
		}
		switch state := slaveState(info, port); {
		case step == 0 && (state == "wait_bgsave" || state == "send_bulk"): // on its way
			rs.links[s].setGate(true)
			gated = true
			step++
		case step == 0 && state == "online": // too late to hold its ACK: the primary may wait for the next
			step = 3
		case step == 1 && infoField(info, "master_link_status") == "up": // loaded
			step++
		case step == 2 && state == "online" && infoField(info, "rdb_bgsave_in_progress") == "0": // reaped
			step++
		default:
			if time.Now().After(deadline) {
				return fmt.Errorf("replica design: %s did not load the primary's snapshot within 5s", rs.servers[s].Addr())
			}
			time.Sleep(200 * time.Microsecond)
		}
	}
	return nil
}

// slaveState is the state of the replica listening on port in a
// primary's INFO replication ("" if it has none).
func slaveState(info, port string) string {
	for _, l := range strings.Split(info, "\n") {
		if !strings.HasPrefix(l, "slave") || !strings.Contains(l, ",port="+port+",") {
			continue
		}
		for _, f := range strings.Split(strings.TrimSpace(l), ",") {
			if v, ok := strings.CutPrefix(f, "state="); ok {
				return v
			}
		}
	}
	return ""
}

// noChild waits until the primary has reaped the child that sent its last
// snapshot (bounded: 5 s): a replica asking for one before would wait for
// Redis's once-a-second cron.
func (rs *replicaSet) noChild(ctx context.Context) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, err := rs.admin[rs.primary].Info(ctx, "persistence").Result()
		if err != nil {
			return fmt.Errorf("replica design: INFO persistence on the primary: %v", err)
		}
		if infoField(info, "rdb_bgsave_in_progress") == "0" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("replica design: the primary's snapshot child still runs after 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// follow makes server s a replica of the primary through a new link,
// held from the start when held (its handshake too).
func (rs *replicaSet) follow(ctx context.Context, s int, held bool) error {
	return rs.followThrough(ctx, s, func(*proxy) {
		if held {
			rs.hold(s)
		}
	})
}

// followThrough makes server s a replica of the primary through a new
// link, which set readies before the replica connects.
func (rs *replicaSet) followThrough(ctx context.Context, s int, set func(*proxy)) error {
	if rs.links[s] != nil {
		rs.links[s].close()
	}
	l, err := newProxy(rs.servers[rs.primary].Addr())
	if err != nil {
		return err
	}
	rs.links[s] = l
	set(l)
	host, port, _ := strings.Cut(l.addr(), ":")
	if err := rs.admin[s].Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		return fmt.Errorf("replica design: REPLICAOF %s on %s: %v", l.addr(), rs.servers[s].Addr(), err)
	}
	return nil
}

// hold holds server s's link (not with the planted open links).
func (rs *replicaSet) hold(s int) {
	if !rs.open {
		rs.links[s].hold()
	}
}

// resync makes the servers ss follow the primary and catch up (catchUp),
// one after the other: a second replica asking for a snapshot while the
// primary sends one to the first would wait for the next one, which
// Redis starts from its once-a-second cron.
func (rs *replicaSet) resync(ctx context.Context, ss []int) error {
	for _, s := range ss {
		if err := rs.noChild(ctx); err != nil {
			return err
		}
		if err := rs.follow(ctx, s, false); err != nil {
			return err
		}
		if err := rs.snapshot(ctx, s); err != nil {
			return err
		}
		if err := rs.catchUp(ctx, []int{s}); err != nil {
			return err
		}
	}
	return nil
}

// catchUp lets the streams of the servers ss through until the primary
// has the acknowledgement of each for everything it has, then holds their
// links again (bounded: 5 s). A replica that follows anew first loads the
// primary's snapshot (its link is up once it has). A PUBLISH on a channel
// nobody reads then marks the primary's offset (it is replicated, and
// changes no key), and the WAIT after it on the same connection returns
// once len(ss) replicas have acknowledged it: only these can, every other
// link is held.
func (rs *replicaSet) catchUp(ctx context.Context, ss []int) error {
	for _, s := range ss {
		rs.links[s].resume()
	}
	defer func() {
		for _, s := range ss {
			rs.hold(s)
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for _, s := range ss {
		for {
			info, err := rs.admin[s].Info(ctx, "replication").Result()
			if err != nil {
				return fmt.Errorf("replica design: INFO replication on %s: %v", rs.servers[s].Addr(), err)
			}
			if infoField(info, "master_link_status") == "up" {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("replica design: %s did not sync with the primary within 5s", rs.servers[s].Addr())
			}
			time.Sleep(time.Millisecond)
		}
	}
	var wait *redis.Cmd
	var info *redis.StringCmd
	_, err := rs.admin[rs.primary].Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Publish(ctx, syncChannel, "catch up")
		wait = p.Do(ctx, "WAIT", len(ss), max(time.Until(deadline).Milliseconds(), 1))
		info = p.Info(ctx, "replication")
		return nil
	})
	if err != nil {
		return fmt.Errorf("replica design: PUBLISH and WAIT on the primary: %v", err)
	}
	if n, _ := wait.Int64(); n < int64(len(ss)) {
		return fmt.Errorf("replica design: %d of %d replicas caught up within 5s (WAIT → %d)", n, len(ss), n)
	}
	if off := infoField(info.Val(), "master_repl_offset"); off == "0" || off == "unknown" {
		return fmt.Errorf("replica design: the primary replicated nothing (master_repl_offset %s): its replicas are not attached", off)
	}
	return nil
}

// syncChannel is the channel of catchUp's PUBLISH.
const syncChannel = "lockcheck:catch-up"

// replicate is the model's replicate step: its replica k (arg+1) catches
// up, and is the freshest now.
func (rs *replicaSet) replicate(ctx context.Context, arg uint8) error {
	k := int(arg) + 1
	if k > len(rs.order) {
		return fmt.Errorf("no replica %d (the design has %d)", k, len(rs.order))
	}
	s := rs.order[k-1]
	if err := rs.catchUp(ctx, []int{s}); err != nil {
		return err
	}
	if !rs.fixed {
		copy(rs.order[1:k], rs.order[:k-1])
		rs.order[0] = s
	}
	return nil
}

// failover is the model's failover step: the primary dies and the model's
// replica arg+1 is promoted (model.promote). With rejoin, the replicas
// follow the new primary as the model has them do; without, nothing
// follows it (no replicate step can come: the failovers are spent and no
// WAIT counts the replicas), and the old primary stays dead.
func (rs *replicaSet) failover(ctx context.Context, arg uint8, rejoin bool) error {
	p := int(arg) + 1
	if p > len(rs.order) {
		return fmt.Errorf("failover: no replica %d to promote (the design has %d)", p, len(rs.order))
	}
	for s, l := range rs.links { // what the replicas had not received is lost
		if l != nil {
			l.close()
			rs.links[s] = nil
		}
	}
	old, s := rs.primary, rs.order[p-1]
	if err := rs.servers[old].Crash(); err != nil {
		return fmt.Errorf("failover: kill the primary: %v", err)
	}
	if err := rs.admin[s].Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("failover: REPLICAOF NO ONE: %v", err)
	}
	rs.primary = s
	if !rejoin {
		return nil
	}
	// the old primary comes back empty (it has no append-only file), as
	// the model's replica p: a spare started with the set plays it (a
	// restart takes 10 to 120 ms on a loaded machine, more than the step's
	// window; an empty redis-server is what it would come back as)
	if len(rs.spares) == 0 {
		return fmt.Errorf("failover: no spare redis-server left to play the old primary back")
	}
	back := rs.spares[0]
	rs.spares = rs.spares[1:]
	fresher := append([]int(nil), rs.order[:p-1]...)
	rs.order[p-1] = back
	for _, t := range rs.order[p:] { // staler: they go on from their copies
		if err := rs.follow(ctx, t, true); err != nil {
			return err
		}
	}
	return rs.resync(ctx, append(fresher, back))
}

// up is how many of the model's replicas are up: replicas 1 … up (the
// down ones come after them: model.upReplicas).
func (rs *replicaSet) up() int {
	for k, b := range rs.back {
		if b != 0 {
			return k
		}
	}
	return len(rs.order)
}

// retire is the model's failover with rejoin=K (model.retire): the
// primary dies (SIGKILL) and stays dead until tick back. With a replica
// up, the model's replica arg+1 is promoted as failover promotes it (the
// fresher ones resync from it in full, the staler up ones follow it
// through held links), and the old primary becomes the last replica,
// down: a spare, which rejoins at tick back (rejoinDue). With none up,
// nobody is promoted: the primary's address stays dead until back, when
// a spare plays the primary restarted (restartDue), and every replica
// comes back with it then.
func (rs *replicaSet) retire(ctx context.Context, arg uint8, back int) error {
	p, up := int(arg)+1, rs.up()
	if up > 0 && p > up {
		return fmt.Errorf("failover: no replica %d up to promote (%d are up)", p, up)
	}
	if len(rs.spares) == 0 {
		return fmt.Errorf("failover: no spare redis-server left to play the old primary back")
	}
	for s, l := range rs.links { // what the replicas had not received is lost
		if l != nil {
			l.close()
			rs.links[s] = nil
		}
	}
	if err := rs.servers[rs.primary].Crash(); err != nil {
		return fmt.Errorf("failover: kill the primary: %v", err)
	}
	spare := rs.spares[0]
	rs.spares = rs.spares[1:]
	if up == 0 { // Sentinel has no replica to promote: the lock service is down
		rs.primaryBack, rs.restarted = back, spare
		for k := range rs.back {
			rs.back[k] = max(rs.back[k], back)
		}
		return nil
	}
	s := rs.order[p-1]
	if err := rs.admin[s].Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("failover: REPLICAOF NO ONE: %v", err)
	}
	rs.primary = s
	fresher := append([]int(nil), rs.order[:p-1]...)
	for _, t := range rs.order[p:up] { // staler: they go on from their copies
		if err := rs.follow(ctx, t, true); err != nil {
			return err
		}
	}
	rs.order = append(append(rs.order[:p-1:p-1], rs.order[p:]...), spare)
	rs.back = append(append(rs.back[:p-1:p-1], rs.back[p:]...), back)
	return rs.resync(ctx, fresher)
}

// restartDue reports whether the primary, down with no replica to
// promote, restarts at tick now: the spare that plays it, empty, is the
// primary from now on (the caller moves the clients to it).
func (rs *replicaSet) restartDue(now int) bool {
	if rs.primaryBack == 0 || rs.primaryBack != now {
		return false
	}
	rs.primary, rs.primaryBack = rs.restarted, 0
	return true
}

// rejoinDue is model.replicaRejoin at tick now: each down replica whose
// tick it is (in the model's order) rejoins the primary with a full
// resync and becomes the freshest replica 1. They rejoin together
// (rejoin): a WAIT blocked on the primary counts them all at once, as
// the model's does.
func (rs *replicaSet) rejoinDue(ctx context.Context, now int) error {
	var ss []int
	for k := 1; k <= len(rs.order); k++ {
		if rs.back[k-1] != now {
			continue
		}
		s := rs.order[k-1]
		copy(rs.order[1:k], rs.order[:k-1])
		copy(rs.back[1:k], rs.back[:k-1])
		rs.order[0], rs.back[0] = s, 0
		ss = append(ss, s)
	}
	return rs.rejoin(ctx, ss)
}

// rejoin makes the servers ss, empty, follow the primary with a full
// resync each, one after the other (resync says why), and lets their
// first acknowledgements reach the primary together: each link holds the
// replica's REPLCONF ACKs from the start, until the replica has loaded
// the primary's snapshot and the primary has put it online (snapshot's
// wait: an ACK before that would not start its stream); then the primary
// is frozen (SIGSTOP), every link lets its ACKs through into the
// primary's sockets, and the primary goes on (SIGCONT), reading them all
// in one pass of its event loop before it answers a blocked WAIT: two
// replicas rejoining at one tick are counted 2, not 1 then 2 (the
// model's replicas rejoin in one step). They are then caught up
// (catchUp), their links held again.
func (rs *replicaSet) rejoin(ctx context.Context, ss []int) error {
	if len(ss) == 0 {
		return nil
	}
	for _, s := range ss {
		if err := rs.noChild(ctx); err != nil {
			return err
		}
		if err := rs.followAcksHeld(ctx, s); err != nil {
			return err
		}
		if err := rs.loaded(ctx, s); err != nil {
			return err
		}
	}
	primary := rs.servers[rs.primary]
	if err := primary.Freeze(); err != nil {
		return fmt.Errorf("rejoin: freeze the primary: %v", err)
	}
	for _, s := range ss {
		rs.links[s].holdAcks(false)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, s := range ss {
		for rs.links[s].acksOnTheWay() > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Microsecond)
		}
	}
	if err := primary.Thaw(); err != nil {
		return fmt.Errorf("rejoin: thaw the primary: %v", err)
	}
	if time.Now().After(deadline) {
		return fmt.Errorf("rejoin: the links did not pass their replicas' ACKs to the primary within 5s")
	}
	return rs.catchUp(ctx, ss)
}

// followAcksHeld makes server s a replica of the primary through a new
// link that holds its REPLCONF ACKs (rejoin).
func (rs *replicaSet) followAcksHeld(ctx context.Context, s int) error {
	return rs.followThrough(ctx, s, func(l *proxy) { l.holdAcks(true) })
}

// loaded waits until server s, following the primary through a link that
// holds its ACKs, has loaded the primary's snapshot, the primary has it
// online and has reaped the child that sent it, and the replica's first
// ACK waits in the link (bounded: 5 s).
func (rs *replicaSet) loaded(ctx context.Context, s int) error {
	deadline := time.Now().Add(5 * time.Second)
	port := rs.servers[s].Addr()[strings.LastIndexByte(rs.servers[s].Addr(), ':')+1:]
	for step := 0; step < 3; {
		switch step {
		case 0:
			info, err := rs.admin[s].Info(ctx, "replication").Result()
			if err != nil {
				return fmt.Errorf("rejoin: INFO replication on %s: %v", rs.servers[s].Addr(), err)
			}
			if infoField(info, "master_link_status") == "up" {
				step++
				continue
			}
		case 1:
			info, err := rs.admin[rs.primary].Info(ctx, "replication", "persistence").Result()
			if err != nil {
				return fmt.Errorf("rejoin: INFO on the primary: %v", err)
			}
			if slaveState(info, port) == "online" && infoField(info, "rdb_bgsave_in_progress") == "0" {
				step++
				continue
			}
		case 2:
			if rs.links[s].acksOnTheWay() > 0 {
				step++
				continue
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("rejoin: %s did not load the primary's snapshot and acknowledge it within 5s (step %d)", rs.servers[s].Addr(), step)
		}
		time.Sleep(200 * time.Microsecond)
	}
	return nil
}

// primaryAddr is the current primary's address.
func (rs *replicaSet) primaryAddr() string { return rs.servers[rs.primary].Addr() }

func (rs *replicaSet) stop() {
	for _, l := range rs.links {
		if l != nil {
			l.close()
		}
	}
	for _, c := range rs.admin {
		c.Close()
	}
	for _, s := range rs.servers {
		s.Stop()
	}
}

// retarget points the proxies for upstream from (the shared one, a
// user's client's lock proxy of its own, and the connection of a client's
// SET and WAIT) at to: connections made from now on go there, those open
// now are closed.
func (h *netHold) retarget(from, to string) {
	for _, key := range []string{from, lockProxyKey(from), waitProxyKey(from)} {
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
	if d.Partitions > 0 || d.NodeCrashes > 0 {
		return fmt.Errorf("design %s: a replica design is played for real with failovers only (partitions=0, node-crashes=0)", d.Name())
	}
	if d.Ack == model.AckWait && d.Delays > 0 {
		return fmt.Errorf("design %s: a held request with WAIT after the acquire (ack=wait) is not played for real; set delays=0", d.Name())
	}
	return nil
}

// primaryDown reports whether a replica design's primary can be down
// (model: retire): with rejoin=K, a failure while every replica is down,
// each a failed primary not yet back, finds no replica to promote; each
// failure takes one replica down for K ticks, so it takes more failovers
// than replicas.
func primaryDown(d *model.Design) bool {
	return d.Lock == model.LockReplica && d.RejoinTicks > 0 && d.Failovers > d.Replicas
}
