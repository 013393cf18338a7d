package reality

import (
	"context"

	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// replicaWorld is a Redis primary with replicas of the run's own
// (replica.go): the clients lock on the primary as on one Redis node
// (keyLock), with ack=wait a WAIT after the acquire (keyLock.sendWait);
// replicate lets a replica's replication stream through, failover
// promotes one and points every client's proxy at it.
type replicaWorld struct {
	redisWorld
	rs        *replicaSet
	failovers int // failover steps played
}

func (w *replicaWorld) start(ctx context.Context) error {
	rs, err := startReplicaSet(ctx, w.d.Replicas, rejoins(w.d), w.opts.plant)
	if err != nil {
		return err
	}
	w.rs = rs
	w.lockAddr = rs.primaryAddr() // the clients' proxies keep this name after a failover
	if err := w.redisWorld.start(ctx); err != nil {
		return err
	}
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
		rejoin := w.failovers <= rejoins(w.d)
		if err := w.rs.failover(ctx, a.Arg, rejoin); err != nil {
			return err
		}
		retarget(w.lockAddr, w.rs.primaryAddr()) // the clients now talk to the promoted replica
		w.obs.c.Close()
		w.obs.c = redis.NewClient(admin(clientOptions(w.rs.primaryAddr(), w.opts.LockDB)))
		return nil
	}
	return w.redisWorld.serviceStep(ctx, a, ob, retarget)
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
// but the last (model: replicaActions).
func rejoins(d *model.Design) int {
	if d.Ack == model.AckWait {
		return d.Failovers
	}
	return max(d.Failovers-1, 0)
}
