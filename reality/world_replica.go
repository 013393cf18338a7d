package reality

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// replicaWorld is a Redis primary with replicas of the run's own
// (replica.go): the clients lock on the primary as on one Redis node
// (keyLock), with ack=wait a WAIT after the acquire (keyLock.sendWait);
// replicate lets a replica's replication stream through, failover
// promotes one and points every client's proxy at it; with rejoin=K the
// failed primaries come back at their ticks (nodesBack).
type replicaWorld struct {
	redisWorld
	rs        *replicaSet
	failovers int // failover steps played
}

func (w *replicaWorld) start(ctx context.Context) error {
	spares := rejoins(w.d)
	if w.d.RejoinTicks > 0 { // every failed primary comes back, after K ticks
		spares = w.d.Failovers
	}
	rs, err := startReplicaSet(ctx, w.d.Replicas, spares, w.opts.plant)
	if err != nil {
		return err
	}
	w.rs = rs
	w.lockAddr = rs.primaryAddr() // the clients' proxies keep this name after a failover
	if err := w.redisWorld.start(ctx); err != nil {
		return err
	}
	w.obs.canFail = primaryDown(w.d) // the primary down: no answer
	return rs.catchUp(ctx, rs.order) // the replicas start equal to the primary, as in the model
}

func (w *replicaWorld) nodes() int { return 0 }

func (w *replicaWorld) serviceStep(ctx context.Context, a model.Action, ob *Obs, retarget func(from, to string)) error {
	switch a.Kind {
	case model.ActReplicate:
		if err := w.rs.replicate(ctx, a.Arg); err != nil {
			return err
		}
		ob.Result = model.ResOK
		return nil
	case model.ActFailover:
		w.failovers++
		var err error
		switch rejoin := w.failovers <= rejoins(w.d); {
		case w.d.RejoinTicks > 0 && !w.opts.plant.restartAtOnce:
			err = w.rs.retire(ctx, a.Arg, ob.Tick+w.d.RejoinTicks)
		case w.d.RejoinTicks > 0: // planted: back at once
			err = w.rs.failover(ctx, a.Arg, true)
		default:
			err = w.rs.failover(ctx, a.Arg, rejoin)
		}
		if err != nil {
			return err
		}
		w.moveClients(retarget) // to the promoted replica (none promoted: the dead primary, whose requests fail)
		return nil
	}
	return w.redisWorld.serviceStep(ctx, a, ob, retarget)
}

// moveClients points the clients' proxies and the observer at the
// primary.
func (w *replicaWorld) moveClients(retarget func(from, to string)) {
	retarget(w.lockAddr, w.rs.primaryAddr())
	w.obs.c.Close()
	o := clientOptions(w.rs.primaryAddr(), w.opts.LockDB)
	if w.obs.canFail {
		o = crashableOptions(w.rs.primaryAddr(), w.opts.LockDB)
	}
	w.obs.c = redis.NewClient(admin(o))
}

// nodesBack is the model's tick for the replica set with rejoin=K
// (model: nodeBack, replicaRejoin), before the clients' own tick: the
// primary, down with no replica to promote, restarts when its tick comes
// (a spare plays it, empty, its fence counter as a new node's: the
// design's first token less one; the clients move to it), then every
// down replica whose tick it is rejoins it, resynced in full.
func (w *replicaWorld) nodesBack(ctx context.Context, now int, retarget func(from, to string)) error {
	if w.d.RejoinTicks == 0 || w.opts.plant.restartAtOnce {
		return nil
	}
	if w.rs.restartDue(now) {
		c := redis.NewClient(admin(clientOptions(w.rs.primaryAddr(), w.opts.LockDB)))
		err := c.Set(ctx, FenceKey, w.d.FirstToken-1, 0).Err()
		c.Close()
		if err != nil {
			return fmt.Errorf("the primary restarted: SET %s: %v", FenceKey, err)
		}
		w.moveClients(retarget)
	}
	return w.rs.rejoinDue(ctx, now)
}

func (w *replicaWorld) stop() {
	w.redisWorld.stop()
	if w.rs != nil {
		w.rs.stop()
	}
}

// rejoins is how many of the design's failovers the replicas follow the
// new primary after: while a replicate step can come after one, with
// ack=wait after each (the old primary rejoins as its replica), else all
// but the last (model: replicaActions). With rejoin=K every failover is
// played as the model's retire, a spare for each.
func rejoins(d *model.Design) int {
	if d.Ack == model.AckWait {
		return d.Failovers
	}
	return max(d.Failovers-1, 0)
}
