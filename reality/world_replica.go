package reality

import (
	"context"

	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// replicaWorld is a Redis primary with a replica of the run's own
// (replica.go): the clients lock on the primary as on one Redis node
// (keyLock); replicate lets the replication stream through, failover
// promotes the replica and points every client's proxy at it.
type replicaWorld struct {
	redisWorld
	rp *replicaPair
}

func (w *replicaWorld) start(ctx context.Context) error {
	rp, err := startReplica(ctx)
	if err != nil {
		return err
	}
	w.rp = rp
	w.lockAddr = rp.primary.Addr()
	if err := w.redisWorld.start(ctx); err != nil {
		return err
	}
	return rp.sync(ctx) // the replica starts equal to the primary, as in the model
}

func (w *replicaWorld) nodes() int { return 0 }

func (w *replicaWorld) serviceStep(ctx context.Context, a model.Action, ob *Obs, retarget func(from, to string)) error {
	switch a.Kind {
	case model.ActReplicate:
		if err := w.rp.sync(ctx); err != nil {
			return err
		}
		ob.Result = model.ResOK
		return nil
	case model.ActFailover:
		if err := w.rp.failover(ctx); err != nil {
			return err
		}
		retarget(w.lockAddr, w.rp.replica.Addr()) // the clients now talk to the promoted replica
		w.obs.c.Close()
		w.obs.c = redis.NewClient(clientOptions(w.rp.replica.Addr(), w.opts.LockDB))
		return nil
	}
	return w.redisWorld.serviceStep(ctx, a, ob, retarget)
}

func (w *replicaWorld) stop() {
	w.redisWorld.stop()
	if w.rp != nil {
		w.rp.stop()
	}
}
